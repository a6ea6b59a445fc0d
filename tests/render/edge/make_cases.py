"""Writes cases.jsonl: renderer edge cases in the ptsx oracle's JSONL case form."""

import json

cases = []


def add(name, root, budgets=(None, 30, 15, 8, 3), tok="words"):
    for b in budgets:
        c = {"id": f"{name}-{b}", "tree": {"root": root}, "tokenizer": tok}
        if b is not None:
            c["budget"] = b
        cases.append(c)


add(
    "flexbasis0",
    [
        {
            "type": "user",
            "children": [
                {"type": "echo", "id": "a", "flexBasis": 0},
                {"type": "echo", "id": "b", "flexBasis": 0},
            ],
        }
    ],
)
add(
    "regexflags",
    [
        {
            "type": "user",
            "children": [
                {
                    "type": "textchunk",
                    "breakOn": {"regex": "X", "flags": "gi"},
                    "text": "one x two X three x four",
                }
            ],
        }
    ],
)
add(
    "regexnog",
    [
        {
            "type": "user",
            "children": [
                {"type": "textchunk", "breakOn": {"regex": "x", "flags": "i"}, "text": "one x two"}
            ],
        }
    ],
)
add(
    "opaquefloat",
    [
        {
            "type": "user",
            "children": [
                "a b",
                {"type": "opaque", "value": "str value", "tokenUsage": 2.5, "priority": 1},
                {
                    "type": "opaque",
                    "value": {"name": "n", "list": [1, "two", {"name": "x"}]},
                    "tokenUsage": 3,
                },
            ],
        }
    ],
    tok="o200k",
)
add(
    "opaquefloat-w",
    [
        {
            "type": "user",
            "children": [
                "a b",
                {"type": "opaque", "value": "str value", "tokenUsage": 2.5, "priority": 1},
                {"type": "opaque", "value": 0, "tokenUsage": 3},
            ],
        }
    ],
)
add(
    "toolname",
    [
        {"type": "tool", "name": "tname", "toolCallId": "x1", "children": ["result text here"]},
        {"type": "system", "name": "sys name", "children": ["s"]},
    ],
    tok="o200k",
)
add(
    "imgdoc-o200k",
    [
        {
            "type": "user",
            "children": [
                "look",
                {"type": "image", "src": "R0lGODdh", "mimeType": "image/gif", "detail": "high"},
                {"type": "document", "data": "abc", "mediaType": "text/plain", "priority": 0},
                "after",
            ],
        },
        {"type": "assistant", "children": ["x", {"type": "image", "src": "UklGRabc"}]},
    ],
    tok="o200k",
)
add(
    "ifempty-array",
    [
        {
            "type": "user",
            "children": [
                {
                    "type": "ifempty",
                    "alt": ["first", {"type": "textchunk", "id": "t", "text": "second"}],
                    "children": [" "],
                }
            ],
        }
    ],
)
add(
    "plist-mixed",
    [
        {
            "type": "user",
            "children": [
                {
                    "type": "prioritizedlist",
                    "priority": 10,
                    "descending": True,
                    "children": [
                        "a a",
                        "",
                        {"type": "br"},
                        {
                            "type": "fragment",
                            "children": [{"type": "textchunk", "priority": 99, "text": "frag"}],
                        },
                        {"type": "opaque", "value": 1, "tokenUsage": 1},
                        {"type": "textchunk", "text": "last one"},
                    ],
                }
            ],
        }
    ],
)
add(
    "kw-messages",
    [
        {
            "type": "keepwith",
            "group": "g",
            "children": [{"type": "user", "priority": 1, "children": ["first group message"]}],
        },
        {"type": "user", "children": ["middle"]},
        {
            "type": "keepwith",
            "group": "g",
            "priority": 5,
            "children": [{"type": "assistant", "children": ["second group message"]}],
        },
    ],
)
add(
    "nested-legacy",
    [
        {
            "type": "user",
            "children": [
                {
                    "type": "legacy",
                    "children": [
                        {
                            "type": "elem",
                            "priority": 1,
                            "children": [
                                {"type": "textchunk", "priority": 3, "text": "aa"},
                                {"type": "cacheBreakpoint"},
                            ],
                        },
                        {"type": "textchunk", "priority": 2, "text": "bb"},
                    ],
                }
            ],
        }
    ],
)
add(
    "cache-in-elem",
    [
        {
            "type": "elem",
            "children": [{"type": "user", "children": ["a", {"type": "cacheBreakpoint"}, "b"]}],
        },
        {"type": "user", "priority": 0, "children": ["c d e"]},
    ],
)
add(
    "emptytoolcalls",
    [
        {"type": "assistant", "toolCalls": [], "children": [" "]},
        {"type": "user", "children": ["x y"]},
        {
            "type": "tool",
            "toolCallId": "c",
            "children": [{"type": "keepwith", "group": "k", "children": ["r"]}],
        },
        {
            "type": "assistant",
            "toolCalls": [{"id": "c", "name": "n", "arguments": "{}", "keepWith": "k"}],
            "children": ["z"],
        },
    ],
)
add(
    "passpriority-empty",
    [
        {
            "type": "user",
            "children": [
                {"type": "elem", "passPriority": True, "children": []},
                {
                    "type": "elem",
                    "passPriority": True,
                    "priority": 3,
                    "children": [
                        {"type": "textchunk", "priority": 1, "text": "p1"},
                        {
                            "type": "elem",
                            "passPriority": True,
                            "children": [{"type": "textchunk", "priority": 0, "text": "p0"}],
                        },
                    ],
                },
                {"type": "textchunk", "priority": 2, "text": "q2"},
            ],
        }
    ],
)
add("text-outside", [{"type": "elem", "children": ["loose text"]}])
add("bp-outside", [{"type": "elem", "children": [{"type": "cacheBreakpoint"}]}])
add("image-root", [{"type": "image", "src": "x"}])
add(
    "reserve-nan",
    [
        {
            "type": "user",
            "children": [
                {"type": "echo", "id": "a"},
                {"type": "echo", "id": "b", "flexGrow": 1, "flexReserve": "/0"},
            ],
        }
    ],
)
add(
    "tl-missing-max",
    [{"type": "user", "children": [{"type": "tokenlimit", "children": ["aa bb"]}]}],
)
add(
    "expand-repeat",
    [
        {
            "type": "user",
            "children": [
                {
                    "type": "expandable",
                    "id": "x",
                    "repeat": {"start": "s", "unit": " u", "max": 50},
                },
                {"type": "textchunk", "text": "tail words"},
            ],
        }
    ],
    budgets=(None, 20, 10),
)
add(
    "unicode-ws",
    [
        {
            "type": "user",
            "children": [
                "a\u00a0b\u2003c\u0085d\u001ce\ufefff",
                {"type": "textchunk", "breakOnWhitespace": True, "text": "x\u2028y z\u3000w"},
            ],
        }
    ],
)
add(
    "names-empty",
    [
        {"type": "user", "name": "", "children": ["n"]},
        {
            "type": "assistant",
            "name": "bob smith",
            "toolCalls": [{"id": "1", "name": "f", "arguments": "a b c"}],
            "children": [],
        },
    ],
    tok="o200k",
)
for c in cases:
    print(json.dumps(c, ensure_ascii=False))
