"""Train a tokenizer from scratch: WordPiece for BERT-like models, Unigram for T5-like ones."""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

BERT_SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
T5_SPECIAL = ["<pad>", "</s>", "<unk>"]
T5_SENTINELS = 100


def train_wordpiece(texts: Iterable[str], vocab_size: int = 30522, min_frequency: int = 2,
                    lowercase: bool = True) -> PreTrainedTokenizerFast:
    """An uncased BERT WordPiece tokenizer; `[CLS] A [SEP]` (and `B [SEP]` for pairs) are added.

    The vocabulary can differ between runs on the same texts: the tokenizers library's WordPiece
    trainer breaks ties between equally frequent merges in hash-map order. For a fixed vocabulary,
    use `wordpiece_from_vocabulary`.
    """
    tokenizer = _bert_pipeline(Tokenizer(models.WordPiece(unk_token="[UNK]")), lowercase)
    trainer = trainers.WordPieceTrainer(vocab_size=vocab_size, min_frequency=min_frequency,
                                        special_tokens=BERT_SPECIAL, show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    return _bert_tokenizer(tokenizer)


def wordpiece_from_vocabulary(tokens: Iterable[str], lowercase: bool = True) -> PreTrainedTokenizerFast:
    """A BERT WordPiece tokenizer over a given vocabulary (the BERT special tokens come first, ids in order)."""
    vocab = {token: i for i, token in enumerate(dict.fromkeys([*BERT_SPECIAL, *tokens]))}
    return _bert_tokenizer(_bert_pipeline(Tokenizer(models.WordPiece(vocab, unk_token="[UNK]")), lowercase))


def _bert_pipeline(tokenizer: Tokenizer, lowercase: bool) -> Tokenizer:
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=lowercase)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.decoder = decoders.WordPiece()
    return tokenizer


def _bert_tokenizer(tokenizer: Tokenizer) -> PreTrainedTokenizerFast:
    cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", cls_id), ("[SEP]", sep_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
        sep_token="[SEP]", mask_token="[MASK]", model_max_length=512)


def train_unigram(texts: Iterable[str], vocab_size: int = 32000) -> PreTrainedTokenizerFast:
    """A T5-style SentencePiece-Unigram tokenizer: pad=0, </s>=1, unk=2, `</s>` appended to every
    text, and the 100 sentinel tokens `<extra_id_0..99>` at the end of the vocabulary."""
    tokenizer = Tokenizer(models.Unigram())
    tokenizer.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.Replace(r"\s+", " ")])
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=vocab_size - T5_SENTINELS, special_tokens=T5_SPECIAL,
                                      unk_token="<unk>", show_progress=False)
    tokenizer.train_from_iterator(texts, trainer)
    sentinels = [f"<extra_id_{i}>" for i in range(T5_SENTINELS)]
    eos_id = tokenizer.token_to_id("</s>")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", eos_id)])
    return PreTrainedTokenizerFast(
        tokenizer_object=tokenizer, pad_token="<pad>", eos_token="</s>", unk_token="<unk>",
        additional_special_tokens=sentinels, model_max_length=512)
