"""Prompt templates (fields, versions, output contracts) and the lenient output parsers."""

import json
from decimal import Decimal

import pytest

from llm import parsers, prompts
from rubrics.structure import format_points, parse_proofbench, parse_refgrader_clusters
from tests.llm import replies

EXPECTED = {
    "proofbench_scheme@v1": {"problem", "solution"},
    "refgrader_cluster@v1": {"problem", "solutions", "count"},
    "refgrader_steps@v1": {"problem", "solution"},
    "refgrader_steps_approachability@v1": {"problem", "solution"},
    "refgrader_rubric_plain@v1": {"problem", "solution", "analysis"},
    "refgrader_rubric_plain@v2": {"problem", "solution", "analysis", "topic"},
    "refgrader_match@v1": {"problem", "representatives", "proof"},
    "refgrader_rubric_approachability@v1": {"problem", "solution", "analysis"},
    "refgrader_rubric_milestones@v1": {"problem", "solution", "analysis"},
    "refgrader_rubric_hybrid@v1": {"problem", "solution", "analysis"},
    "verifier@v1": {"problem", "proof"},
    "meta_verifier@v1": {"problem", "proof", "analysis"},
    "defect_split@v1": {"analysis"},
    "grade_proof@v1": {"problem", "reference", "scheme", "proof"},
    "grade_proof@v2": {"problem", "reference", "scheme", "proof"},
    "grade_proof_flexible@v1": {"problem", "context_note", "context", "proof"},
    "grade_proof_strict@v1": {"problem", "context_note", "context", "proof"},
    "pairwise_pick@v1": {"problem", "first", "second"},
}


def test_every_template_has_its_named_fields():
    assert set(prompts.available()) == set(EXPECTED)
    for key, fields in EXPECTED.items():
        assert prompts.get(key).fields == fields, key


def test_render_fills_fields_and_keeps_latex_braces():
    messages = prompts.render(
        "proofbench_scheme@v1", problem=r"Show $\frac{1}{2} \le x$.", solution="{{not a field}}"
    )
    assert [m["role"] for m in messages] == ["system", "user"]
    assert r"Show $\frac{1}{2} \le x$." in messages[1]["content"]
    assert "{{not a field}}" in messages[1]["content"]  # values are not templates
    assert "{{" not in messages[1]["content"].replace("{{not a field}}", "")


def test_render_refuses_missing_and_unknown_fields():
    with pytest.raises(prompts.PromptError, match="missing field.*solution"):
        prompts.render("proofbench_scheme@v1", problem="p")
    with pytest.raises(prompts.PromptError, match="unknown field.*proof"):
        prompts.render("proofbench_scheme@v1", problem="p", solution="s", proof="x")
    with pytest.raises(prompts.PromptError, match="No prompt template"):
        prompts.get("proofbench_scheme@v99")
    with pytest.raises(prompts.PromptError, match="name@version"):
        prompts.get("proofbench_scheme")
    assert prompts.versions("proofbench_scheme") == ["v1"]


def test_proofbench_prompt_states_its_output_contract():
    user = prompts.get("proofbench_scheme@v1").user
    for phrase in (
        "## 1. Checkpoints (max 7 pts total)",
        "## 2. Zero-credit items",
        "## 3. Deductions",
        "[additive]",
        "[max k]",
        "award the larger only",
        "take the maximum subtotal among chains",
        "count at most once regardless of chain",
        "[cap x/7]",
        "Only the single largest deduction applies",
    ):
        assert phrase in user, phrase


def test_milestone_rubric_prompts_ask_for_rounding_down():
    for design in ("milestones", "hybrid"):
        assert "rounded down" in prompts.get(f"refgrader_rubric_{design}@v1").user
    assert "rounded down" not in prompts.get("refgrader_rubric_plain@v1").user


def test_scheme_sections_drop_reasoning_preamble_and_fences():
    reply = (
        f"<think>points...</think>\n```markdown\n{replies.PROOFBENCH_SCHEME}```\nHope this helps!"
    )
    sections = parsers.scheme_sections(reply)
    assert sections.text.startswith("## 1. Checkpoints")
    assert "Here is the marking scheme" in sections.preamble or sections.preamble == ""
    assert "Chain B" in sections.checkpoints
    assert "Restating the problem" in sections.zero_credit
    assert "[cap 5/7]" in sections.deductions
    scheme, messages = parse_proofbench(sections.text)
    assert {k: format_points(v) for k, v in scheme.chain_totals().items()} == {"A": "7", "B": "7"}
    assert not [m for m in messages if m.is_error]


def test_scheme_sections_refuse_a_reply_without_checkpoints():
    with pytest.raises(parsers.OutputError, match="Checkpoints"):
        parsers.scheme_sections("I'm sorry, I can't help with that.")
    with pytest.raises(parsers.OutputError):
        parsers.scheme_sections("<think>Let me think about the checkpoints of this problem")


def test_json_from_fences_stray_text_trailing_commas_and_think():
    assert parsers.parse_json('Sure! ```json\n[{"a": 1},]\n``` done', list) == [{"a": 1}]
    assert parsers.parse_json('<think>[not json</think> The answer: {"b": [1, 2]} ok', dict) == {
        "b": [1, 2]
    }
    assert parsers.parse_json('{"s": "a ] in a string"}') == {"s": "a ] in a string"}
    with pytest.raises(parsers.OutputError, match="expected a JSON list"):
        parsers.parse_json('{"a": 1}', list)
    with pytest.raises(parsers.OutputError, match="invalid JSON|no JSON"):
        parsers.parse_json('[{"cluster": "C1", "members": [1, 2')


def test_clusters_keep_each_solution_once_and_fix_the_representative():
    reply = (
        '[{"cluster": "C1", "main_steps": ["a"], "members": [1, 2], "representative": 5},'
        ' {"class_id": "C2", "main_steps": ["b"], "members": [2, 3], "representative": 3}]'
    )
    found = parsers.clusters(reply, ["one", "two", "three"])
    assert [(c.label, c.members, c.representative) for c in found] == [
        ("C1", [1, 2], 1),
        ("C2", [3], 3),
    ]
    with pytest.raises(parsers.OutputError, match="No cluster"):
        parsers.clusters('[{"members": [9]}]', ["one", "two", "three"])


def test_clusters_in_the_papers_own_shape_name_the_representative_by_its_text():
    solutions = [replies.SOLUTION_A, replies.SOLUTION_B, replies.SOLUTION_A2]
    # RefGrader's reply: class_id, main_steps and the representative copied out (with slips)
    copied = replies.SOLUTION_B.replace("forces its neighbours", "forces both neighbours")
    reply = json.dumps(
        [
            {
                "class_id": "C1",
                "main_steps": ["pigeonhole", "Rolle"],
                "representative_solution": "  " + replies.SOLUTION_A2.replace(" ", "\n", 3),
            },
            {"class_id": "C2", "main_steps": ["Newton"], "representative_solution": copied},
            {"class_id": "C3", "main_steps": ["?"], "representative_solution": "A comment."},
        ]
    )
    found = parsers.clusters(reply, solutions)
    assert [(c.label, c.members, c.representative, c.main_steps) for c in found] == [
        ("C1", [3], 3, ["pigeonhole", "Rolle"]),
        ("C2", [2], 2, ["Newton"]),
    ]


def test_closest_cluster_reads_the_matching_reply():
    found = parsers.closest_cluster(
        'Comparing prefixes:\n```json\n{"closest_rep_id": "C2", "justification": "prefix 2"}\n```',
        ["C1", "C2"],
    )
    assert found == parsers.ClusterMatch("C2", "prefix 2")
    with pytest.raises(parsers.OutputError, match="'C7', which is not one of C1, C2"):
        parsers.closest_cluster('{"closest_rep_id": "C7"}', ["C1", "C2"])
    with pytest.raises(parsers.OutputError, match="names no cluster"):
        parsers.closest_cluster('{"justification": "both"}', ["C1", "C2"])


def test_main_steps_with_and_without_approachability():
    steps = parsers.main_steps(replies.ANALYSIS_A)
    assert [(s.number, s.title) for s in steps] == [
        (1, "Pigeonhole on the zero positions"),
        (2, "Consecutive zeros and Rolle"),
    ]
    rated = parsers.main_steps(
        replies.with_approachability(replies.ANALYSIS_A, (3, 2)), approachability=True
    )
    assert [s.approachability for s in rated] == [3, 2]
    with pytest.raises(parsers.OutputError, match="Main step 1 has no approachability"):
        parsers.main_steps(replies.ANALYSIS_A, approachability=True)
    with pytest.raises(parsers.OutputError, match="no main step"):
        parsers.main_steps("The solution is elegant.")


def test_score_xml_reads_the_one_closed_score_of_the_answer():
    reply = "<think><score>0</score></think><score> 5 </score><assessment>Good.</assessment>"
    result = parsers.score_xml(reply)
    assert result.score == 5 and result.fields["assessment"] == "Good."
    for score in ("9", "3.5", "7/7", "-1"):
        with pytest.raises(parsers.OutputError, match="not an integer from 0 to 7"):
            parsers.score_xml(f"<score>{score}</score>")
    with pytest.raises(parsers.OutputError, match="no <score>"):
        parsers.score_xml("Score: 5")


@pytest.mark.parametrize(
    ("reply", "why"),
    [
        ("<assessment>Sound.</assessment><score>5</score> <score>6</score>", "2 <score> tags"),
        ("<assessment>Sound.</assessment><score>5", "<score> is never closed"),
        ("<assessment>Sound.</assessment></score>5<score>", "<score> is never closed"),
        ("<assessment>Step 1 holds and<score>7</score>", "<assessment> is never closed"),
        ("<think>Step 2 fails, so <score>2</score> maybe; but", "reasoning block"),
        ("<score>4</score><think>on second thought", "reasoning block"),
    ],
)
def test_a_grader_reply_without_exactly_one_closed_score_fails(reply, why):
    with pytest.raises(parsers.OutputError, match=why):
        parsers.score_xml(reply)


def test_points_out_of_7_reads_the_one_block_of_the_answer():
    reply = "<think><points>0 out of 7</points></think>Sound.\n<points>6 out of 7</points>"
    assert parsers.points_out_of_7(reply) == Decimal(6)
    assert parsers.points_out_of_7("<POINTS> 1 out of 7 </POINTS>") == Decimal(1)
    with pytest.raises(parsers.OutputError, match="not 'N out of 7'"):
        parsers.points_out_of_7("<points>8 out of 7</points>")
    with pytest.raises(parsers.OutputError, match="not 'N out of 7'"):
        parsers.points_out_of_7("<points>6/7</points>")
    with pytest.raises(parsers.OutputError, match="2 <points> tags"):
        parsers.points_out_of_7("<points>6 out of 7</points> or <points>7 out of 7</points>")
    with pytest.raises(parsers.OutputError, match="<points> is never closed"):
        parsers.points_out_of_7("Sound. <points>6 out")
    with pytest.raises(parsers.OutputError, match="reasoning block"):
        parsers.points_out_of_7("<think>cut off while reasoning <points>7 out of 7</points>")


@pytest.mark.parametrize("design", ["plain", "approachability", "milestones", "hybrid"])
def test_sample_rubrics_join_into_a_valid_two_chain_scheme(design):
    texts = [
        parsers.unfence(replies.rubric(design, "a", replies.RUBRIC_A_STEPS)),
        replies.rubric(design, "b", replies.RUBRIC_B_STEPS),
    ]
    scheme, messages = parse_refgrader_clusters(texts, design)
    assert not [m.text for m in messages if m.is_error]
    assert {k: format_points(v) for k, v in scheme.chain_totals().items()} == {"A": "7", "B": "7"}
    assert scheme.round_down is (design in ("milestones", "hybrid"))
