"""Import of existing schemes: the real MathArena grading_scheme.json, the real IMO-ProofBench
guidelines (CSV and DeepSeekMath-V2 outputs), RefGrader rubric designs, and parse_scheme."""

import csv
import json
from decimal import Decimal

import pytest

from rubrics.structure import (
    FORMATS,
    Level,
    Partial,
    Scheme,
    SchemeKind,
    check_awards,
    compute_score,
    guideline_categories,
    parse_imobench,
    parse_matharena,
    parse_refgrader,
    parse_refgrader_clusters,
    parse_scheme,
    scheme_to_markdown,
)
from tests.rubrics.test_structure_examples import (
    PB_CHAINS,
    RG_APPROACHABILITY,
    RG_MILESTONES,
    RG_MILESTONES_B,
    RG_PLAIN,
    RG_PROMPT_SHAPE,
)

D = Decimal

# Points per item of the six USAMO 2025 problems, as in the file.
USAMO_2025_POINTS = {
    "1": [1, 3, 2, 1],
    "2": [1, 2, 3, 1],
    "3": [3, 1, 2, 1],
    "4": [1, 4, 2],
    "5": [1, 3, 3],
    "6": [1, 3, 3],
}


@pytest.fixture
def matharena_file(real_fixtures):
    return (real_fixtures / "matharena_usamo2025" / "grading_scheme.json").read_text()


@pytest.mark.parametrize("problem_id", sorted(USAMO_2025_POINTS))
def test_real_matharena_scheme_parses_and_validates(matharena_file, problem_id):
    result = parse_scheme(matharena_file, "matharena_json", problem_id=problem_id)
    assert result.is_valid and result.messages == []
    scheme = result.scheme
    leaves = scheme.leaves()
    assert [int(cp.points) for cp in leaves] == USAMO_2025_POINTS[problem_id]
    assert [cp.id for cp in leaves] == [f"c{i}" for i in range(1, len(leaves) + 1)]
    assert all(cp.partial is Partial.INTEGER for cp in leaves)
    assert scheme.chain_totals() == {"A": D(7)}
    full = {cp.id: cp.points for cp in leaves}
    assert compute_score(scheme, full) == D(7)
    # the markdown view reads back to the same structure
    assert parse_scheme(scheme_to_markdown(scheme), "markdown").scheme == scheme


def test_real_matharena_titles_and_descriptions_are_kept(matharena_file):
    entries = json.loads(matharena_file)
    scheme, _ = parse_matharena(entries, "2")
    first = scheme.leaves()[0]
    assert first.title == entries[1]["scheme"][0]["title"] == "Pigeonhole principle"
    assert first.description == entries[1]["scheme"][0]["desc"].strip()


def test_real_matharena_entry_and_item_list_forms(matharena_file):
    entries = json.loads(matharena_file)
    by_entry, _ = parse_matharena(entries[3])
    by_items, _ = parse_matharena(entries[3]["scheme"])
    by_file, _ = parse_matharena(matharena_file, "4")
    assert by_entry == by_items == by_file
    # partial credit inside an item: 2 of the 4 points for "Properties of the construction"
    assert compute_score(by_entry, {"c1": 1, "c2": 2}) == D(3)


@pytest.mark.parametrize(
    ("data", "problem_id", "words"),
    [
        ("{not json", None, "Not valid JSON"),
        ("[]", None, "lists no items"),
        ('[{"id": "1", "points": 7, "scheme": []}, {"id": "2", "scheme": []}]', None, "say which"),
        ('[{"id": "1", "points": 7, "scheme": [{"title": "x", "points": 7}]}]', "9", "No problem"),
        ('[{"title": "x"}]', None, "item 1 has no points"),
        ('[{"title": "x", "points": "lots"}]', None, "item 1 has points 'lots'"),
        ("[3]", None, "item 1 is not an object"),
    ],
)
def test_matharena_bad_input_is_named(data, problem_id, words):
    scheme, messages = parse_matharena(data, problem_id)
    assert scheme is None
    assert messages[0].level is Level.ERROR and words in messages[0].text


def test_matharena_declared_total_mismatch_is_a_warning():
    entry = {"id": "1", "points": 7, "scheme": [{"title": "a", "points": 3, "desc": ""}] * 2}
    scheme, messages = parse_matharena(entry)
    assert scheme is not None
    assert "declares 7 points but its items add up to 6" in messages[-1].text
    assert messages[-1].level is Level.WARNING


# --- IMO-ProofBench guidelines -------------------------------------------------------------


def test_every_real_imobench_guideline_is_a_valid_band_scheme(real_fixtures):
    with open(real_fixtures / "imobench" / "proofbench_v2.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 60
    for row in rows:
        result = parse_scheme(row["Grading guidelines"], "imobench_guidelines")
        assert result.is_valid and result.messages == [], row["Problem ID"]
        scheme = result.scheme
        assert scheme.kind is SchemeKind.BANDS
        assert [(b.id, str(b.points)) for b in scheme.bands] == [
            ("correct", "7"),
            ("almost", "6"),
            ("partial", "1"),
            ("incorrect", "0"),
        ]
        categories = guideline_categories(row["Grading guidelines"])
        for band in scheme.bands:
            assert band.lines == [" ".join(line.split()) for _, line in categories.get(band.id, [])]
        assert scheme.guidelines == row["Grading guidelines"].strip()
        assert Scheme.from_dict(scheme.to_dict()) == scheme


def test_real_imobench_categories_are_read_by_line(real_fixtures):
    with open(real_fixtures / "imobench" / "proofbench_v2.csv", newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Problem ID"] == "PB-Basic-007")
    categories = guideline_categories(row["Grading guidelines"])
    assert list(categories) == ["incorrect", "partial", "almost"]
    assert [n for n, _ in categories["partial"]] == [4, 5, 6]
    assert categories["incorrect"][0][1].startswith("We do not give partial credits")


def test_real_deepseek_outputs_guidelines(real_fixtures):
    path = real_fixtures / "deepseek_math_v2" / "imo_proofbench_outputs_sample.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    assert [r["problem_idx"] for r in records] == [
        "PB-Basic-002",
        "PB-Advanced-002",
        "PB-Advanced-011",
    ]
    for record in records:
        result = parse_scheme(record["grading guidelines"], "imobench_guidelines")
        assert result.is_valid and result.scheme.kind is SchemeKind.BANDS
        assert result.scheme.band("partial").lines
    categories = guideline_categories(records[2]["grading guidelines"])
    assert categories == {
        "partial": [
            (2, "Considered $(x,y) = (c+1, \\frac{c}{f(c+1)})$."),
            (3, "Proved that $f$ is subjective."),
        ],
        "almost": [(5, "Proved that $f$ is injective.")],
    }


IMO_WITH_POINTS = """(Incorrect)
 1. Checking small cases only.
(Partial)
 1. Proved that $f$ is injective (1 pt).
 2. Found both candidate solutions and verified them (2 pts).
(Almost)
 1. Complete except for the verification of $f(x) = x$ (6 pts).
"""


def test_imobench_lines_stating_their_points_take_precedence_over_the_band():
    scheme, messages = parse_imobench(IMO_WITH_POINTS)
    assert messages == []
    assert [(b.id, str(b.points), b.lines) for b in scheme.bands] == [
        ("correct", "7", []),
        ("almost", "6", ["Complete except for the verification of $f(x) = x$."]),
        ("partial-2", "2", ["Found both candidate solutions and verified them."]),
        ("partial", "1", ["Proved that $f$ is injective."]),
        ("incorrect", "0", ["Checking small cases only."]),
    ]
    # the picked band's points are the score; one band only
    assert compute_score(scheme, {"partial-2": 2}) == D(2)
    assert compute_score(scheme, {}) == D(0)
    assert check_awards(scheme, {"partial": 1, "almost": 6}) == [
        "pick one band, not several (partial, almost)"
    ]
    assert check_awards(scheme, {"almost": 7}) == ["the Almost band gives 6, not 7"]
    assert check_awards(scheme, {"c1": 1}) == ["c1 is not a band of this scheme"]
    again, _ = parse_imobench(scheme_to_markdown(scheme))
    assert again.bands == scheme.bands


def test_imobench_text_without_a_band_header_is_kept_as_guidelines():
    result = parse_scheme("Give credit for the key lemma.", "imobench_guidelines")
    assert result.scheme is None and not result.is_valid
    assert "No (Incorrect), (Partial)" in result.messages[0].text
    assert result.guidelines == "Give credit for the key lemma."


def test_imobench_lines_before_any_header_are_notes_with_a_warning():
    scheme, messages = parse_imobench("Be strict.\n(Partial)\n 1. Lemma.\n")
    assert scheme.notes == "Be strict."
    assert [(m.level, m.line) for m in messages] == [(Level.WARNING, 1)]


# --- RefGrader rubric designs --------------------------------------------------------------


def test_refgrader_plain_rubric():
    scheme, messages = parse_refgrader(RG_PLAIN, "plain")
    assert messages == []
    assert [(cp.id, str(cp.points)) for cp in scheme.leaves()] == [
        ("c1", "1"),
        ("c2", "2"),
        ("c3", "2"),
        ("c4", "2"),
    ]
    c2 = scheme.checkpoint("c2")
    assert c2.title == "Key Strategic Insight 2: Pigeonhole on zero positions"
    assert "Sub-step 2.2: only $n-2$ interior positions" in c2.description
    assert c2.award_levels() == [D(0), D("0.5"), D(1), D("1.5"), D(2)]
    assert not scheme.round_down
    assert [z.text for z in scheme.zero_credit] == [
        "Restating the problem.",
        "Checking small examples without a general argument.",
    ]
    assert "6 or 6.5 points" in scheme.notes
    # plain design: half points stay in the final score
    assert compute_score(scheme, {"c1": 1, "c2": "1.5", "c3": 2, "c4": 2}) == D("6.5")


def test_refgrader_approachability_rubric():
    scheme, messages = parse_refgrader(RG_APPROACHABILITY, "approachability")
    assert messages == []
    assert [(cp.title, str(cp.points), cp.approachability) for cp in scheme.leaves()] == [
        ("Key Strategic Insight 1", "1", 4),
        ("Key Strategic Insight 2", "2", 2),
        ("Key Strategic Insight 3", "4", 1),
    ]
    assert scheme.checkpoint("c3").description.startswith("Consecutive zeros lemma. Full 4 points")


def test_refgrader_milestone_rubric_rounds_down():
    scheme, messages = parse_refgrader(RG_MILESTONES, "milestones")
    assert messages == []
    assert scheme.round_down
    assert [cp.title for cp in scheme.leaves()] == ["Milestone 1", "Milestone 2", "Milestone 3"]
    assert compute_score(scheme, {"c1": 2, "c2": "2.5", "c3": "1.5"}) == D(6)  # floor(6.0)
    assert compute_score(scheme, {"c1": 2, "c2": "2.5", "c3": 1}) == D(5)  # floor(5.5)


@pytest.mark.parametrize("design", ["plain", "milestones"])
def test_refgrader_rubric_in_proofbench_sections(design):
    scheme, messages = parse_refgrader(RG_PROMPT_SHAPE, design)
    assert messages == []
    assert [(cp.id, cp.title, str(cp.points), cp.partial) for cp in scheme.leaves()] == [
        ("c1", "Reduction and pigeonhole", "3", Partial.HALF),
        ("c2", "Consecutive zeros and the lemma", "4", Partial.HALF),
    ]
    # "Partial:" sub-bullets are guidance for the step, not checkpoints of their own
    assert scheme.checkpoint("c1").description.endswith("Partial: 1.5 pts for the reduction alone.")
    assert scheme.round_down  # the text says so, whatever the design
    assert scheme.deductions == []  # "- None."
    assert scheme.notes == "A 7 completes both steps; a 5 misses the lemma's proof."
    assert compute_score(scheme, {"c1": "1.5", "c2": "3.5"}) == D(5)  # floor(5.0)
    assert compute_score(scheme, {"c1": 3, "c2": "3.5"}) == D(6)  # floor(6.5)


def test_refgrader_hybrid_design_rounds_down_even_without_saying_so():
    text = "## Rubric\n- **Milestone 1 (3 points):** a\n- **Milestone 2 (4 points):** b\n"
    assert parse_refgrader(text, "hybrid")[0].round_down
    assert not parse_refgrader(text, "plain")[0].round_down


def test_refgrader_clusters_become_parallel_chains():
    scheme, messages = parse_refgrader_clusters(
        [RG_MILESTONES, RG_MILESTONES_B], "milestones", titles=["Pigeonhole", "Newton"]
    )
    assert messages == []
    assert [(c.id, c.title) for c in scheme.chains] == [("A", "Pigeonhole"), ("B", "Newton")]
    assert [cp.id for cp in scheme.leaves()] == ["A1", "A2", "A3", "B1", "B2"]
    assert scheme.chain_totals() == {"A": D(7), "B": D(7)}
    assert [z.text for z in scheme.zero_credit] == [
        "No meaningful progress toward any milestone.",
        "Stating Newton's inequalities without proof.",
    ]
    # the best cluster's rubric counts, never the two added
    assert compute_score(scheme, {"A1": 2, "A2": 3, "B1": 3}) == D(5)
    assert compute_score(scheme, {"A1": 2, "B1": 3, "B2": "3.5"}) == D(6)  # floor(6.5)


@pytest.mark.parametrize(
    ("text", "design", "words"),
    [
        ("", "plain", "empty"),
        ("## Rubric\nNo steps at all.\n", "plain", "No main step"),
        ("- **Step 1 (2 points):** a\n", "sideways", "Unknown RefGrader rubric design"),
    ],
)
def test_refgrader_nothing_to_parse(text, design, words):
    scheme, messages = parse_refgrader(text, design)
    assert scheme is None and words in messages[0].text


def test_refgrader_cluster_that_cannot_be_read_is_named():
    scheme, messages = parse_refgrader_clusters(
        [RG_MILESTONES, "Just prose, no steps.", RG_MILESTONES_B],
        "milestones",
        titles=["Pigeonhole", "Broken", "Newton"],
    )
    assert [(c.id, c.title) for c in scheme.chains] == [("A", "Pigeonhole"), ("B", "Newton")]
    assert [(m.level, m.text) for m in messages] == [
        (Level.ERROR, "Rubric 2: No main step with a point value was found in the rubric.")
    ]


def test_refgrader_total_other_than_seven_is_flagged():
    scheme, messages = parse_refgrader("- **Step 1 (2 points):** a\n- **Step 2 (3 points):** b\n")
    assert scheme is not None
    assert (
        messages[0].text == "The main steps add up to 5 points; a RefGrader rubric distributes 7."
    )
    assert any("No chain reaches exactly 7/7" in m.text for m in messages)


# --- parse_scheme --------------------------------------------------------------------------


def test_parse_scheme_dispatches_every_format(matharena_file):
    samples = {
        "proofbench_markdown": PB_CHAINS,
        "matharena_json": json.loads(matharena_file)[0],
        "imobench_guidelines": IMO_WITH_POINTS,
        "refgrader_plain": RG_PLAIN,
        "refgrader_approachability": RG_APPROACHABILITY,
        "refgrader_milestones": RG_MILESTONES,
        "refgrader_hybrid": RG_MILESTONES,
    }
    assert set(samples) == set(FORMATS)
    for fmt, content in samples.items():
        result = parse_scheme(content, fmt)
        assert result.is_valid, (fmt, result.messages)
        scheme, messages = result
        assert isinstance(scheme, Scheme) and messages == result.messages
        assert Scheme.from_dict(json.loads(json.dumps(scheme.to_dict()))) == scheme


def test_parse_scheme_refuses_unknown_formats_and_non_text():
    assert "Unknown scheme format" in parse_scheme("x", "latex").messages[0].text
    assert "must be text" in parse_scheme(["x"], "proofbench_markdown").messages[0].text


# --- Real text that is not a scheme -------------------------------------------------------


def _real_texts(real_fixtures) -> list[str]:
    texts = []
    with open(real_fixtures / "imobench" / "proofbench_v2.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            texts += [row["Problem"], row["Solution"], row["Grading guidelines"]]
    for path in sorted(real_fixtures.glob("deepseek_math_v2/*.jsonl")):
        for line in path.read_text().splitlines():
            prediction = json.loads(line).get("model_prediction") or {}
            texts.append(prediction.get("proof", ""))
    texts += [p.read_text() for p in sorted(real_fixtures.glob("matharena_usamo2025/*/*.tex"))]
    return texts


def test_no_parser_raises_on_real_problems_solutions_and_proofs(real_fixtures):
    texts = _real_texts(real_fixtures)
    assert len(texts) > 190
    parsed = 0
    for text in texts:
        for fmt in FORMATS:
            if fmt == "matharena_json":
                continue
            result = parse_scheme(text, fmt)
            assert result.scheme is not None or result.messages
            parsed += result.scheme is not None
    # the 60 guidelines are band schemes; only one solution carries something scheme-like
    # (PB-Advanced-015, below)
    assert parsed == 61


def test_real_marking_scheme_inside_an_imobench_solution(real_fixtures):
    with open(real_fixtures / "imobench" / "proofbench_v2.csv", newline="") as handle:
        row = next(r for r in csv.DictReader(handle) if r["Problem ID"] == "PB-Advanced-015")
    block = row["Solution"].split("[Marking Scheme]", 1)[1]
    scheme, messages = parse_scheme(block, "proofbench_markdown")
    assert [(cp.id, str(cp.points)) for cp in scheme.leaves()] == [
        ("c1", "2"),
        ("c2", "2"),
        ("c3", "2"),
    ]
    assert scheme.checkpoint("c2").title.startswith("$Q$ is the point of tangency")
    assert [(m.level, m.text) for m in messages] == [
        (
            Level.ERROR,
            "No chain reaches exactly 7/7, so no proof could get full marks "
            "(the most each chain can give: A: 6).",
        )
    ]
