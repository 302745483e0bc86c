"""BERT-uncased tokenisation (Devlin et al. 2019) as Hugging Face's BertTokenizer applies it to
bert-*-uncased (do_lower_case, strip_accents following it, tokenize_chinese_chars), and BERT-cased
(lower=False: bert-*-cased, do_lower_case false, strip_accents following it: neither lower-casing
nor accent stripping, as BertTokenizerFast's BertNormalizer(lowercase=False); the slow
BertTokenizer also NFC-normalises first since transformers 4.x, which only differs on decomposed
input), for the WordPiece parity test (tests/io/test_import_parity.cpp). Written from the published algorithm,
independent of the engine (engine/data/wordpiece_tokenizer.cpp) and of transformers (not
installed here). Python's unicodedata supplies the Unicode facts.

BasicTokenizer
    clean       drop NUL, U+FFFD and control characters (every category C*, except \\t \\n \\r, which
                are whitespace); whitespace (' ', \\t, \\n, \\r and category Zs) becomes ' '
    chinese     a space on both sides of every CJK ideograph (the CJK Unified Ideographs blocks
                and extensions A-E, the compatibility ideographs and their supplement)
    words       split on whitespace; each word lower-cased (str.lower), NFD-normalised with the
                nonspacing marks (Mn) dropped (uncased only), then split around every punctuation character:
                ASCII 33-47, 58-64, 91-96, 123-126 and every Unicode category P*
WordpieceTokenizer
    a word of more than 100 characters is [UNK]; otherwise greedy longest match first from the
    left, pieces after the first prefixed '##'; a word that cannot be covered is one [UNK]
Framing: [CLS] a [SEP], or [CLS] a [SEP] b [SEP] with token types 0 … 0 1 … 1.
"""
import unicodedata

MAX_INPUT_CHARS_PER_WORD = 100


def is_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_control(ch):
    if ch in "\t\n\r":
        return False
    return unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_cjk(ch):
    cp = ord(ch)
    return any(a <= cp <= b for a, b in CJK_RANGES)


def basic_tokens(text, lower=True):
    cleaned = []
    for ch in text:
        if ord(ch) == 0 or ord(ch) == 0xFFFD or is_control(ch):
            continue
        if is_whitespace(ch):
            cleaned.append(" ")
        elif is_cjk(ch):
            cleaned.extend((" ", ch, " "))
        else:
            cleaned.append(ch)
    words = []
    for word in "".join(cleaned).split():
        if lower:
            word = unicodedata.normalize("NFD", word.lower())
            word = "".join(ch for ch in word if unicodedata.category(ch) != "Mn")
        current = ""
        for ch in word:
            if is_punctuation(ch):
                if current:
                    words.append(current)
                words.append(ch)
                current = ""
            else:
                current += ch
        if current:
            words.append(current)
    return words


def wordpiece(word, vocab, unk="[UNK]"):
    if len(word) > MAX_INPUT_CHARS_PER_WORD:
        return [unk]
    pieces, start = [], 0
    while start < len(word):
        end, found = len(word), None
        while end > start:
            candidate = ("##" if start > 0 else "") + word[start:end]
            if candidate in vocab:
                found = candidate
                break
            end -= 1
        if found is None:
            return [unk]
        pieces.append(found)
        start = end
    return pieces


def tokenize(text, vocab, lower=True):
    """The WordPiece pieces of `text` (no framing)."""
    return [p for w in basic_tokens(text, lower) for p in wordpiece(w, vocab)]


def encode(text_a, vocab, text_b=None, lower=True):
    """(ids, token types) of [CLS] a [SEP] (b [SEP]); `vocab` maps piece -> id."""
    a = [vocab[p] for p in tokenize(text_a, vocab, lower)]
    ids = [vocab["[CLS]"]] + a + [vocab["[SEP]"]]
    types = [0] * len(ids)
    if text_b is not None:
        b = [vocab[p] for p in tokenize(text_b, vocab, lower)]
        ids += b + [vocab["[SEP]"]]
        types += [1] * (len(b) + 1)
    return ids, types


def selfcheck():
    """Published examples (BERT's tokenization.py docstring, transformers' tokenizer tests)."""
    assert basic_tokens(" \tHeLLo!how  \n Are yoU?  ") == ["hello", "!", "how", "are", "you", "?"]
    assert basic_tokens(" \tHäLLo!how  \n Are yoU?  ") == ["hallo", "!", "how", "are", "you", "?"]
    assert basic_tokens("ah\u535A\u63A8zz") == ["ah", "\u535A", "\u63A8", "zz"]
    # transformers' tests of BasicTokenizer(do_lower_case=False) (accents kept by default)
    assert basic_tokens(" \tHeLLo!how  \n Are yoU?  ", lower=False) == \
        ["HeLLo", "!", "how", "Are", "yoU", "?"]
    assert basic_tokens(" \tHäLLo!how  \n Are yoU?  ", lower=False) == \
        ["HäLLo", "!", "how", "Are", "yoU", "?"]
    assert wordpiece("unaffable", {"un", "##aff", "##able"}) == ["un", "##aff", "##able"]
    vocab = {"[UNK]", "[CLS]", "[SEP]", "want", "##want", "##ed", "wa", "un", "runn", "##ing"}
    assert tokenize("unwanted running", vocab) == ["un", "##want", "##ed", "runn", "##ing"]
    assert tokenize("unwantedX running", vocab) == ["[UNK]", "runn", "##ing"]
    assert tokenize("", vocab) == []
    assert is_control("\u0005") and not is_control("A") and not is_control(" ")
    assert not is_control("\t") and not is_control("\r")
    assert is_whitespace(" ") and is_whitespace("\t") and is_whitespace("\u00A0")
    assert not is_whitespace("A") and not is_whitespace("-")
    assert all(is_punctuation(c) for c in "-$`.") and not is_punctuation("A")
    assert not is_punctuation(" ")
