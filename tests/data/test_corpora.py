"""Corpus readers: NLTK zips as shipped, plain text, JSON lines; splitting, filtering, de-duplication."""

from __future__ import annotations

import json
import zipfile

import pytest
from conftest import DATA, needs

from sentforge.data.corpora import (
    SentenceFilter,
    detokenize,
    load_sentences,
    read_corpus,
    read_nltk_zip,
    split_sentences,
)
from sentforge.support.errors import ConfigError, InputFileError

CORPORA = DATA / "corpora"


def test_split_sentences_keeps_abbreviations_and_quotes():
    text = ('Mr. Smith went to Washington. He arrived at 5 p.m. on Monday! Did he stay? '
            '"Yes," said Dr. Jones. "He did." The U.S. Senate met.  2020 was a year.')
    assert split_sentences(text) == [
        "Mr. Smith went to Washington.", "He arrived at 5 p.m. on Monday!", "Did he stay?",
        '"Yes," said Dr. Jones.', '"He did."', "The U.S. Senate met.", "2020 was a year."]
    assert split_sentences("  ") == []
    assert split_sentences("no final stop") == ["no final stop"]


def test_detokenize_undoes_treebank_tokenisation():
    assert detokenize("`` I do n't know , '' he said ( twice ) .".split()) == "\"I don't know,\" he said (twice)."
    assert detokenize(["It", "'s", "$", "5", "."]) == "It's $5."


def _zip(path, files: dict[str, str]):
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return path


def test_nltk_formats_read_from_the_zip(tmp_path):
    brown = _zip(tmp_path / "brown.zip", {
        "brown/README": "not a sentence",
        "brown/ca01": "\n\n\tThe/at jury/nn said/vbd ``/`` no/at ''/'' ./.\n\n\n\tIt/pps did/dod n't/*  ./.\n",
    })
    assert read_nltk_zip(brown) == ['The jury said "no".', "It didn't."]
    conll = _zip(tmp_path / "conll2000.zip", {"conll2000/train.txt": "He PRP B-NP\nran VBD B-VP\n. . O\n\nOk UH O\n"})
    assert read_nltk_zip(conll) == ["He ran.", "Ok"]
    pros = _zip(tmp_path / "pros_cons.zip",
                {"pros_cons/IntegratedPros.txt": "<Pros>Fast, cheap</Pros>\n<Pros></Pros>\n"})
    assert read_nltk_zip(pros) == ["Fast, cheap"]
    rte = _zip(tmp_path / "rte.zip", {"rte/rte1_dev.xml": (
        '<?xml version="1.0"?><entailment-corpus><pair id="1" value="TRUE"><t>A cat sat. It slept.</t>'
        "<h>A cat rested.</h></pair></entailment-corpus>")})
    assert read_nltk_zip(rte) == ["A cat sat.", "It slept.", "A cat rested."]
    web = _zip(tmp_path / "webtext.zip", {"webtext/overheard.txt": "Girl #1: Oh my. That is great!\n"})
    assert read_nltk_zip(web) == ["Oh my.", "That is great!"]
    raw = ".START \n\nPierre Vinken will join. He is 61.\n"
    treebank = _zip(tmp_path / "treebank.zip", {"treebank/raw/wsj_0001": raw})
    assert read_nltk_zip(treebank) == ["Pierre Vinken will join.", "He is 61."]
    other = _zip(tmp_path / "notes.zip", {"a/x.txt": "First one. Second one.\n"})
    assert read_nltk_zip(other) == ["First one.", "Second one."]


def test_plain_text_jsonl_and_directories(tmp_path):
    (tmp_path / "a.txt").write_text("One sentence here. Another one there.\n\nThird line\n", encoding="utf-8")
    (tmp_path / "b.jsonl").write_text(json.dumps({"body": "Json text. Two."}) + "\n", encoding="utf-8")
    assert read_corpus(tmp_path / "a.txt") == ["One sentence here.", "Another one there.", "Third line"]
    assert read_corpus(tmp_path / "a.txt", split=False) == ["One sentence here. Another one there.", "Third line"]
    assert read_corpus(tmp_path / "b.jsonl", field="body") == ["Json text.", "Two."]
    with pytest.raises(InputFileError, match="b.jsonl:1: no field 'text'"):
        read_corpus(tmp_path)  # the directory reads b.jsonl with the default field
    (tmp_path / "b.jsonl").unlink()
    assert read_corpus(tmp_path) == ["One sentence here.", "Another one there.", "Third line"]


def test_bad_corpus_paths_raise_clear_errors(tmp_path):
    with pytest.raises(InputFileError, match="corpus not found"):
        read_corpus(tmp_path / "missing")
    (tmp_path / "x.csv").write_text("text\nhi\n")
    with pytest.raises(InputFileError, match="unsupported corpus file type .csv"):
        read_corpus(tmp_path / "x.csv")
    with pytest.raises(InputFileError, match="holds no .zip"):
        read_corpus(tmp_path)
    (tmp_path / "bad.zip").write_bytes(b"not a zip")
    with pytest.raises(InputFileError, match="bad.zip: not a readable zip"):
        read_corpus(tmp_path / "bad.zip")


def test_filter_deduplicates_and_bounds_length(tmp_path):
    sentences = ["A b c", "a  B c", "too short", "one two three four five six", "x y z"]
    assert SentenceFilter(min_words=3, max_words=5)(sentences) == ["A b c", "x y z"]
    assert SentenceFilter(min_words=2, max_words=6, deduplicate=False)(sentences) == [
        "A b c", "a B c", "too short", "one two three four five six", "x y z"]
    with pytest.raises(ConfigError):
        SentenceFilter(min_words=5, max_words=2)
    (tmp_path / "c.txt").write_text("A b c\nA b c\nd e f\n", encoding="utf-8")
    assert load_sentences([tmp_path / "c.txt"]) == ["A b c", "d e f"]


@pytest.mark.slow
@needs(CORPORA / "brown.zip")
def test_real_nltk_packages_match_nltk_sentence_counts():
    # NLTK's own readers give brown.sents() = 57,340 and conll2000.sents() = 8,936 + 2,012.
    brown = read_nltk_zip(CORPORA / "brown.zip")
    assert len(brown) == 57340
    assert brown[0].startswith("The Fulton County Grand Jury said Friday an investigation of Atlanta's")
    assert len(read_nltk_zip(CORPORA / "conll2000.zip")) == 10948
    rte = read_nltk_zip(CORPORA / "rte.zip")
    assert rte[:2] == ["Crude oil for April delivery traded at $37.80 a barrel, down 28 cents",
                       "Crude oil prices rose to $37.80 per barrel"]
