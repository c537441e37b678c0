"""Whole-JSON files read one element at a time: values and lines whatever the chunk size,
errors naming the line, an element the database cannot store failing alone, and a buffer
bounded by the largest element, not the file."""

import json

import pytest

from problems.importers.base import Progress, SourceError, storable_rows
from problems.importers.jsonstream import JsonStream, json_array_rows
from problems.models import Problem
from problems.services import corpus_import

CHUNK_SIZES = [1, 2, 3, 7, 64, 65536]
TRICKY = [
    {"text": 'brackets ], [ and braces }, { and "escaped" quotes, a \\ and a comma, here'},
    [[1, [2, [3, []]]], {"a": [{"b": "]"}]}, "[", "]", ","],
    "caf\u00e9 \u2211 \U0001f600 \\u005d",
    12345678901234567890,
    -0.5e-3,
    True,
    False,
    None,
    {},
    [],
    "",
]


def stream(path, *, chunk_size: int = 65536, objects: bool = False, shape: str = "SHAPE"):
    with path.open("rb") as handle:
        reader = JsonStream(handle, path.name, shape=shape, objects=objects, chunk_size=chunk_size)
        return [(where.line, value) for where, value in reader], reader


def error_of(path, **options) -> tuple[int | None, str]:
    with pytest.raises(SourceError) as caught:
        stream(path, **options)
    return caught.value.issue.where.line, caught.value.issue.message


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_each_element_comes_with_the_line_it_starts_on(tmp_path, chunk_size):
    path = tmp_path / "inputs.json"
    path.write_text(
        '[\n  {"id": 1,\n   "q": "a"},\n  {"id": 2, "q": "b\\nc"}, 3,\n\n  [4,\n5]\n]\n',
        encoding="utf-8",
    )
    rows, _ = stream(path, chunk_size=chunk_size)
    assert rows == [(2, {"id": 1, "q": "a"}), (4, {"id": 2, "q": "b\nc"}), (4, 3), (6, [4, 5])]


@pytest.mark.parametrize("chunk_size", CHUNK_SIZES)
def test_nested_values_strings_with_brackets_and_escapes_and_split_characters(tmp_path, chunk_size):
    path = tmp_path / "tricky.json"
    path.write_text(json.dumps(TRICKY, ensure_ascii=False, indent=2), encoding="utf-8")
    rows, _ = stream(path, chunk_size=chunk_size)
    assert [value for _, value in rows] == TRICKY


def test_a_top_level_object_is_one_element_where_the_format_allows_it(tmp_path):
    path = tmp_path / "solved.json"
    path.write_bytes(b'\xef\xbb\xbf\n\n{"problem_id": "P", "attempts": [{"solution": "]"}]}\n')
    rows, reader = stream(path, objects=True, chunk_size=5)
    assert rows == [(3, {"problem_id": "P", "attempts": [{"solution": "]"}]})]
    assert reader.top == "{"
    assert error_of(path, shape="A list, please.") == (3, "A list, please.")


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"", (None, "The file is empty: nothing to import.")),
        (b"  \n\n ", (None, "The file is empty: nothing to import.")),
        (b'\n"a string"', (2, "SHAPE")),
        (b"\n\n42", (3, "SHAPE")),
        (b'[\n{"a": 1},\n{"a": 2,, "b": 3},\n{"a": 4}\n]', (3, "Not valid JSON: Expecting")),
        (b'[\n{"a": 1}\n{"a": 2}\n]', (3, "Not valid JSON: Expecting ',' delimiter.")),
        (b'[\n{"a": 1},\n]', (3, "Not valid JSON: Expecting value.")),
        (b'[\n{"a": 1},\n{"a": "an unfinished', (3, "Not valid JSON: Unterminated string")),
        (b'[\n{"a": 1},\n{"a": [1, 2', (3, "Not valid JSON: Expecting ',' delimiter.")),
        (b'[\n{"a": 1},\n{"a": 2}', (3, "Not valid JSON: the file ends inside the list.")),
        (b'[\n{"a": 1},\n{"a": tru', (3, "Not valid JSON: Expecting value.")),
        (b"[\n1,\nNaN]", (3, "Not valid JSON: NaN is not allowed.")),
        (b"[\n1\n]\n]", (4, "Not valid JSON: Extra data.")),
        (b'[\n"ok",\n"cut \xc3', (3, "Not valid JSON: Unterminated string")),
        (b"\xff\xfe[\x001\x00]\x00", (None, "The file is UTF-16 or UTF-32")),
    ],
    ids=[
        "empty",
        "blank",
        "a string",
        "a number",
        "bad JSON in the middle",
        "missing comma",
        "trailing comma",
        "truncated in a string",
        "truncated in a list",
        "truncated before the end of the list",
        "truncated literal",
        "NaN",
        "extra data",
        "truncated character",
        "utf-16",
    ],
)
@pytest.mark.parametrize("chunk_size", [1, 4, 65536])
def test_a_bad_file_raises_one_error_naming_its_line(tmp_path, content, expected, chunk_size):
    path = tmp_path / "bad.json"
    path.write_bytes(content)
    line, message = error_of(path, chunk_size=chunk_size)
    assert line == expected[0]
    assert message.startswith(expected[1])


@pytest.mark.parametrize("chunk_size", [1, 4, 65536])
def test_an_element_the_database_cannot_store_fails_alone_naming_its_field(tmp_path, chunk_size):
    path = tmp_path / "inputs.json"
    path.write_bytes(
        b'[\n{"q": "ok"},\n{"q": "caf\xe9"},\n{"q": "a\x00b", "k": ["\\u0000"]},'
        b'\n{"q": "\\ud800 half"},\n{"q": "fine"}\n]'
    )
    progress = Progress()
    with path.open("rb") as handle:
        reader = JsonStream(handle, path.name, shape="SHAPE", chunk_size=chunk_size)
        rows = [(where.line, value) for where, value in storable_rows(reader)]
    assert rows[0] == (2, {"q": "ok"}) and rows[-1] == (6, {"q": "fine"})
    assert [(line, issue.field, issue.message[:30]) for line, issue in rows[1:-1]] == [
        (3, "q", "holds the byte 0xe9 at charact"),
        (4, "q", "holds a NUL character (U+0000)"),
        (4, "k[0]", "holds a NUL character (U+0000)"),
        (5, "q", "holds a lone surrogate (U+D800"),
    ]
    assert list(json_array_rows(path, progress, "inputs.json", shape="SHAPE"))[1][1].field == "q"


def test_an_element_larger_than_the_chunk_is_read_whole(tmp_path):
    big = {"proof": 'x]\\",' * 20_000, "steps": list(range(2000))}
    path = tmp_path / "big.json"
    path.write_text(json.dumps([1, big, 2]), encoding="utf-8")
    size = len(json.dumps(big))
    rows, reader = stream(path, chunk_size=1024)
    assert [value for _, value in rows] == [1, big, 2]
    assert size < reader.largest <= 2 * size + 2 * 1024


def test_the_buffer_stays_a_few_chunks_long_for_a_long_list(tmp_path):
    entries = [
        {"id": index, "question": f"Problem {index}: show that [{index}, {index + 1}] is fine."}
        for index in range(20_000)
    ]
    path = tmp_path / "many.json"
    path.write_text(json.dumps(entries, indent=1), encoding="utf-8")
    assert path.stat().st_size > 1000 * 1024
    rows, reader = stream(path, chunk_size=1024)
    assert len(rows) == 20_000
    assert rows[-1] == (2 + 4 * 19_999, entries[-1])  # indent=1: "[", then 4 lines an entry
    assert reader.largest <= 3 * 1024


def test_json_array_rows_counts_the_bytes_it_reads(tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps([{"id": index} for index in range(100)]), encoding="utf-8")
    progress = Progress()
    rows = list(json_array_rows(path, progress, "inputs.json", shape="SHAPE"))
    assert [value["id"] for _, value in rows] == list(range(100))
    assert progress.bytes_read == path.stat().st_size


def deepseek_inputs(count: int, **overrides) -> list[dict]:
    entries = [
        {
            "id": index,
            "question": f"Show that {index} + 1 > {index}. " + "Pad. " * 150,
            "answer": "",
            "contest": "TEST",
            "problem_idx": f"TEST2024-{index}",
        }
        for index in range(1, count + 1)
    ]
    for index, changes in overrides.items():
        entries[int(index.removeprefix("entry")) - 1].update(changes)
    return entries


@pytest.mark.django_db
def test_deepseek_inputs_name_the_line_an_entry_starts_on(tmp_path):
    path = tmp_path / "inputs.json"
    path.write_text(json.dumps(deepseek_inputs(3, entry3={"question": ""}), indent=4))
    report = corpus_import(path=path)
    assert [(issue["line"], issue["field"]) for issue in report.issues] == [(16, "question")]
    assert Problem.objects.count() == 2  # the entry fails alone


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("name", "content", "line", "words", "read"),
    [
        (
            "inputs.json",
            json.dumps(deepseek_inputs(3), indent=4).replace('"id": 2,', '"id": 2,,'),
            10,
            "Not valid JSON: Expecting property name enclosed in double quotes. Nothing after",
            1,
        ),
        (
            "inputs.json",
            json.dumps(deepseek_inputs(3), indent=4)[:-300],
            18,
            "Unterminated string",
            2,
        ),
        (
            "opc.json",
            '[{"problem_id": "O-1", "problem": "P", "solutions": []}, 7]',
            1,
            "not a JSON",
            1,
        ),
    ],
    ids=["bad JSON in the middle", "truncated", "an entry that is not an object"],
)
def test_a_bad_entry_after_good_ones_is_named_and_the_good_ones_are_imported(
    tmp_path, name, content, line, words, read
):
    """A list broken in the middle cannot be read on: the entries before the break are
    imported, and the error says that nothing after it was read."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    report = corpus_import(path=path)
    errors = [issue for issue in report.issues if issue["level"] == "error"]
    assert [(issue["file"], issue["line"]) for issue in errors] == [(name, line)], errors
    assert words in errors[0]["message"]
    assert report.lines()[-1].endswith("were not imported; every other record was.")
    assert Problem.objects.count() == read


@pytest.mark.django_db
def test_a_latin_1_byte_past_the_first_64_kib_fails_its_entry_alone(tmp_path):
    entries = deepseek_inputs(120, entry100={"question": "caf\u00e9 is not UTF-8 here"})
    text = json.dumps(entries, indent=4, ensure_ascii=False)
    path = tmp_path / "inputs.json"
    path.write_bytes(text.encode("latin-1"))
    assert text.find("caf\u00e9") > 64 * 1024
    report = corpus_import(path=path)
    entry_line = text[: text.find('"id": 100,')].count("\n")  # the line of the entry's "{"
    assert [(i["line"], i["field"]) for i in report.issues] == [(entry_line, "question")]
    assert "holds the byte 0xe9 at character 4, which is not UTF-8" in report.issues[0]["message"]
    assert Problem.objects.count() == 119
