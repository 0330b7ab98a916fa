"""Writes tests/corpus/split.jsonl: how a raw file's bytes become lines (the contract's section
2), decided here by hand, not by running either engine. A file is split at the newline byte
before anything is decoded; one carriage return before a newline is dropped; no line follows a
final newline; each line is decoded on its own, and one that is not UTF-8 is quarantined alone
as `not UTF-8 at byte N`, N counted from the line's first byte (0) to its first byte that does
not begin or continue a valid UTF-8 character.

Each case gives the file's inflated bytes in hex and each line's text, or its reason. The lab
(crates/raw/src/raw/mod.rs's test) and the Spark driver (spark/tests/test_corpus.py) give every
answer.

    python3 tests/corpus/split_cases.py > tests/corpus/split.jsonl
"""

import json


def case(name, data, *lines):
    expect = [{"reason": x[1:]} if x.startswith("!") else {"text": x} for x in lines]
    print(json.dumps({"case": name, "hex": data.hex(), "lines": expect}, ensure_ascii=False))


case("two lines and a final newline", b'{"a":1}\n{"b":2}\n', '{"a":1}', '{"b":2}')
case("no final newline", b"a\nb", "a", "b")
case("an empty file has no line", b"")
case("a lone newline is one blank line", b"\n", "")
case("blank lines are lines", b"\n\na\n", "", "", "a")
case("a carriage return before each newline is dropped", b"a\r\nb\r\n", "a", "b")
case("only one carriage return is dropped", b"a\r\r\n", "a\r")
case("a carriage return the file ends on stays", b"a\r\nb\r", "a", "b\r")
case("a NUL byte is UTF-8", b"a\x00b\n", "a\x00b")
case("UTF-8 of two, three and four bytes", "é€😀\n".encode(), "é€😀")
case("a bad byte alone: the lines around it land", b'{"a":1}\n{"b":"\xff"}\n{"c":3}\n', '{"a":1}', "!not UTF-8 at byte 6", '{"c":3}')
case("a bad first byte", b"\xff{}\n", "!not UTF-8 at byte 0")
case("a character cut at the line's end", b"ab\xe2\x82\nok\n", "!not UTF-8 at byte 2", "ok")
case("a character cut by the newline itself", b"\xe2\n\x82\xac\n", "!not UTF-8 at byte 0", "!not UTF-8 at byte 0")
case("an overlong encoding of /", b"x\xc0\xaf\n", "!not UTF-8 at byte 1")
case("a surrogate written as UTF-8", b"ab\xed\xa0\x80\n", "!not UTF-8 at byte 2")
case("past U+10FFFF", b"\xf4\x90\x80\x80\n", "!not UTF-8 at byte 0")
case("counted in bytes, not characters", "é€".encode() + b"\xff\n", "!not UTF-8 at byte 5")
case("Latin-1 text", "café".encode("latin-1") + b"\n", "!not UTF-8 at byte 3")
case("a bad line's carriage return is dropped before it is decoded", b"\xff\r\n", "!not UTF-8 at byte 0")
case("a carriage return before the bad byte is the line's", b"ab\r\xff\n", "!not UTF-8 at byte 3")
case("the last line, with no newline, is bad", b"a\nb\xff", "a", "!not UTF-8 at byte 1")
