"""`sentforge explain`: word pieces to whole words, leave-one-word-out deletion against cosines computed by
hand, integrated gradients' completeness, the refusal of gradients for word-vector and ONNX models, and the CLI."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import sentforge
from sentforge import Encoder
from sentforge.support.errors import ConfigError, OutputExistsError
from sentforge.explanation import format_table
from sentforge.explanation.words import Word, split_words, tokenize_words, without_word, words_from_tokens
from sentforge.modules import Pooling, T5EncoderDecoder

from conftest import assert_one_line_error, bag_of_words, run_cli

pytestmark = pytest.mark.usefixtures("one_torch_thread")

A = "the cat sat on the mat"
B = "a dog runs in the park"


def cos(u, v) -> float:
    return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))


# --- word pieces to words ---------------------------------------------------------------------------------

def test_word_pieces_group_into_whole_words():
    # "[CLS] un ##believ ##able , mat [SEP]" for "unbelievable, mat"
    text = "unbelievable, mat"
    word_ids = [None, 0, 0, 0, 1, 2, None]
    offsets = [(0, 0), (0, 2), (2, 8), (8, 12), (12, 13), (14, 17), (0, 0)]
    words = words_from_tokens(text, word_ids, offsets)
    assert words == (Word("unbelievable", 0, 12, (1, 2, 3)), Word(",", 12, 13, (4,)), Word("mat", 14, 17, (5,)))


def test_zero_width_pieces_join_their_word_without_widening_it():
    # a sentencepiece word marker as its own zero-width token, then "cat" "s"; "</s>" at the end
    text = "cats sat"
    word_ids = [0, 0, 0, 1, None]
    offsets = [(0, 0), (0, 3), (3, 4), (5, 8), (8, 8)]
    assert words_from_tokens(text, word_ids, offsets) == (Word("cats", 0, 4, (0, 1, 2)), Word("sat", 5, 8, (3,)))


def test_words_of_a_bert_tokenizer(tiny_bert_dir):
    encoder = sentforge.load(tiny_bert_dir)
    text = "  The catsat, on mat  "
    tokenized = tokenize_words(encoder, text)
    assert tokenized.text == text.strip()
    assert [w.text for w in tokenized.words] == ["The", "catsat", ",", "on", "mat"]
    # the ids are the ones encode uses; "catsat" is one word of several pieces; [CLS] and [SEP] belong to none
    assert list(tokenized.ids) == encoder.input_module.token_ids([text])[0][0]
    pieces = [encoder.input_module.tokenizer.convert_ids_to_tokens(tokenized.ids[p]) for p in tokenized.words[1].tokens]
    assert pieces[0] == "cat" and len(pieces) > 1 and all(p.startswith("##") for p in pieces[1:])
    assert tokenized.special == (0, len(tokenized.ids) - 1)


def test_without_word_and_split_words():
    text = "don't reset, please"
    words = split_words(text)
    assert [w.text for w in words] == ["don", "'", "t", "reset", ",", "please"]
    assert without_word(text, words[1]) == "don t reset, please"
    assert without_word(text, words[0]) == "'t reset, please"
    assert without_word(text, words[3]) == "don't , please"
    assert without_word(text, words[5]) == "don't reset,"


# --- deletion ---------------------------------------------------------------------------------------------

def test_deletion_influence_equals_hand_computed_cosine_differences(tiny_bert_dir):
    encoder = sentforge.load(tiny_bert_dir)
    result = sentforge.explain(encoder, A, B, methods="deletion")
    va, vb = encoder.encode([A, B])
    assert result.similarity == pytest.approx(cos(va, vb), abs=1e-6)
    cat = result.a.words[1]
    assert cat.word == "cat" and cat.gradient is None
    assert cat.deletion == pytest.approx(cos(va, vb) - cos(encoder.encode("the sat on the mat"), vb), abs=1e-6)
    park = result.b.words[-1]
    assert park.word == "park"
    assert park.deletion == pytest.approx(cos(va, vb) - cos(va, encoder.encode("a dog runs in the")), abs=1e-6)


def test_deletion_works_for_any_encoder():
    model = bag_of_words()
    result = sentforge.explain(model, "cat sat", "cat ran", methods=["deletion"])
    va, vb = model.encode(["cat sat", "cat ran"])
    assert [w.word for w in result.a.words] == ["cat", "sat"]
    assert result.a.words[0].deletion == pytest.approx(cos(va, vb) - cos(model.encode(["sat"])[0], vb), abs=1e-6)


# --- integrated gradients ---------------------------------------------------------------------------------

def _padded_vector(encoder, text):
    """The vector of `text` with every word piece replaced by the padding token, through the ordinary input-id path."""
    tokenized = tokenize_words(encoder, text)
    ids = list(tokenized.ids)
    for word in tokenized.words:
        for position in word.tokens:
            ids[position] = encoder.input_module.tokenizer.pad_token_id
    features = {"input_ids": torch.tensor([ids]), "attention_mask": torch.ones(1, len(ids), dtype=torch.long)}
    with torch.no_grad():
        return encoder.eval()(features)["sentence_embedding"][0].numpy()


def _t5_encdec(path):
    backbone = T5EncoderDecoder.from_pretrained(path)
    return Encoder([backbone, Pooling(backbone.output_dim, "cls")])


@pytest.mark.parametrize("kind", ["bert", "t5-encoder", "t5-encdec"])
@pytest.mark.parametrize("baseline", ["each", "pair"])
def test_integrated_gradients_are_complete(kind, baseline, tiny_bert_dir, tiny_t5_dir):
    encoder = {"bert": lambda: sentforge.load(tiny_bert_dir), "t5-encoder": lambda: sentforge.load(tiny_t5_dir),
               "t5-encdec": lambda: _t5_encdec(tiny_t5_dir)}[kind]()
    result = sentforge.explain(encoder, A, B, steps=64, baseline=baseline)
    va, vb = encoder.encode([A, B])
    pad_a, pad_b = _padded_vector(encoder, A), _padded_vector(encoder, B)
    sum_a, sum_b = sum(result.a.token_gradients), sum(result.b.token_gradients)
    if baseline == "pair":  # both texts move from padding together: one sum over both texts' tokens
        sums, gains = [sum_a + sum_b], [cos(va, vb) - cos(pad_a, pad_b)]
    else:  # each text moves from padding with the other text kept
        sums, gains = [sum_a, sum_b], [cos(va, vb) - cos(pad_a, vb), cos(va, vb) - cos(va, pad_b)]
    for total, gain in zip(sums, gains):
        assert abs(gain) > 1e-3  # the test would be empty otherwise
        assert total == pytest.approx(gain, abs=2e-3 + 0.02 * abs(gain))
    # special tokens keep their embeddings on the path, so the words hold every attribution
    assert sum(w.gradient for w in result.a.words) == pytest.approx(sum_a, abs=1e-6)
    assert result.gradients.similarity == pytest.approx(cos(va, vb), abs=1e-5)
    assert all(w.deletion is not None for w in result.a.words)


def test_gradients_are_refused_for_word_vectors_and_onnx(tmp_path, tiny_bert_dir):
    glove = tmp_path / "vectors.txt"
    glove.write_text("the 1 0 0\ncat 0 2 0\nsat 0 0 3\ndog 1 1 0\n", encoding="utf-8")
    model = sentforge.load(f"glove:{glove}")
    with pytest.raises(ConfigError, match="word-vector model.*deletion works"):
        sentforge.explain(model, "the cat sat", "the dog")
    result = sentforge.explain(model, "the cat sat", "the dog", methods="deletion")
    assert [w.word for w in result.a.words] == ["the", "cat", "sat"]
    va, vb = model.encode(["the cat sat", "the dog"])
    assert result.a.words[2].deletion == pytest.approx(cos(va, vb) - cos(model.encode("the cat"), vb), abs=1e-6)

    pytest.importorskip("onnxruntime")
    from sentforge.scale.export import export_encoder

    export_encoder(sentforge.load(tiny_bert_dir), tmp_path / "onnx", format="onnx")
    onnx = sentforge.load(tmp_path / "onnx")
    with pytest.raises(ConfigError, match="ONNX"):
        sentforge.explain(onnx, A, B, methods="gradients")
    assert len(sentforge.explain(onnx, A, B, methods="deletion").a.words) == 6


# --- command line -----------------------------------------------------------------------------------------

def test_cli_prints_the_table_and_writes_the_html(tiny_bert_dir, tmp_path, capsys):
    page = tmp_path / "pair.html"
    code, out, err = run_cli(["explain", tiny_bert_dir, A, B, "--top", "3", "--html", page, "--steps", "16"], capsys)
    assert code == 0, err
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("text"))
    assert "deletion" in lines[header] and "gradients" in lines[header]
    assert len(lines) - header - 1 == 3
    html = page.read_text(encoding="utf-8")
    assert html.count("<span") == 2 * 12 and "cat</span>" in html
    code, _, err = run_cli(["explain", tiny_bert_dir, A, B, "--html", page], capsys)
    assert_one_line_error(code, err, str(page), "--overwrite")


def test_explain_with_html_writes_the_page_and_prints_the_table_of_the_cli(tiny_bert_dir, tmp_path, capsys):
    code, out, err = run_cli(["explain", tiny_bert_dir, A, B, "--html", tmp_path / "cli.html", "--steps", "8"], capsys)
    assert code == 0, err
    result = sentforge.explain(str(tiny_bert_dir), A, B, steps=8, html=tmp_path / "python.html")
    assert out == format_table(result, 10) + "\n"
    assert (tmp_path / "python.html").read_text(encoding="utf-8") == (tmp_path / "cli.html").read_text(encoding="utf-8")
    with pytest.raises(OutputExistsError, match="--overwrite"):
        sentforge.explain(str(tiny_bert_dir), A, B, methods="deletion", html=tmp_path / "python.html")
    sentforge.explain(str(tiny_bert_dir), A, B, methods="deletion", html=tmp_path / "python.html", overwrite=True)
    assert "gradients" not in (tmp_path / "python.html").read_text(encoding="utf-8")


@pytest.mark.parametrize(("args", "fragment"), [
    (["", B], "text_a is empty"),
    ([A, B, "--method", "shap"], "shap"),
    ([A, B, "--top", "0"], "--top"),
    ([A, B, "--steps", "0"], "--steps"),
    ([A, B, "--baseline", "zero"], "--baseline"),
])
def test_cli_bad_input_is_one_error_line(tiny_bert_dir, capsys, args, fragment):
    code, _, err = run_cli(["explain", tiny_bert_dir, *args], capsys)
    assert_one_line_error(code, err, fragment)


# --- what the tokenizer hides -------------------------------------------------------------------------------

def test_words_of_unknown_tokens_are_flagged_in_the_result_table_and_html(tiny_bert_dir, tmp_path, capsys):
    # The tiny vocabulary holds the corpus' characters only: an emoji maps to [UNK] alone.
    text_a = f"{A} \N{GRINNING FACE}"
    result = sentforge.explain(str(tiny_bert_dir), text_a, B, methods="deletion")
    flags = {w.word: w.unknown for w in result.a.words}
    assert flags["\N{GRINNING FACE}"] is True and sum(flags.values()) == 1
    assert not any(w.unknown for w in result.b.words) and result.warnings == ()
    page = tmp_path / "pair.html"
    code, out, err = run_cli(["explain", tiny_bert_dir, text_a, B, "--method", "deletion", "--top", "30",
                              "--html", page], capsys)
    assert code == 0, err
    assert "\N{GRINNING FACE} *" in out and "maps this word only to its unknown token" in out
    html = page.read_text(encoding="utf-8")
    assert html.count('class="unknown"') == 1 and "(unknown token)" in html


def test_two_texts_of_unknown_tokens_only_are_warned_about(tiny_bert_dir, caplog):
    with caplog.at_level("WARNING", logger="sentforge.explanation.api"):
        result = sentforge.explain(str(tiny_bert_dir), "\N{GRINNING FACE} \N{PARTY POPPER}",
                                   "\N{SLIGHTLY SMILING FACE} \N{CLOUD WITH RAIN}", methods="deletion")
    assert result.similarity == pytest.approx(1.0)  # [CLS] [UNK] [UNK] [SEP] twice: one input
    assert len(result.warnings) == 1 and "unknown token" in result.warnings[0] and "says nothing" in result.warnings[0]
    assert "says nothing" in caplog.text
    assert any(line.startswith("warning: every word of both texts") for line in format_table(result).splitlines())


def test_a_text_cut_at_the_max_length_says_how_many_of_its_words_were_explained(tiny_bert_dir):
    encoder = sentforge.load(tiny_bert_dir)
    encoder.max_seq_length = 8  # [CLS] + 6 pieces + [SEP]
    long_text = " ".join(["the cat sat on the mat"] * 5)  # 30 words, each one piece
    result = sentforge.explain(encoder, long_text, B, methods="deletion")
    assert len(result.a.words) == 6 and result.a.words_in_text == 30
    assert result.b.words_in_text == len(result.b.words)
    assert result.warnings == ("text a is longer than the model's max length of 8 tokens: 6 of its 30 words "
                               "explained (the model never sees the rest)",)
