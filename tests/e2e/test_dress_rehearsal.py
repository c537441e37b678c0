"""The dress rehearsal (issue 14, item 7): a real campaign from real corpora, driven through the
browser by each role in turn, on the real Celery worker.

admin imports the corpus files and approves their schemes, sets up a campaign (two experts, every
item double-scored); expert1 and expert2 grade in the browser, disagreeing once; the adjudicator
settles it; the researcher exports ProofBench JSONL and D_v Parquet, which `datasets` loads
offline with the adjudicated label. Once with IMO-ProofBench and DeepSeekMath-V2's outputs
(band schemes), once with the MathArena USAMO 2025 folder (points per step).

The files are read from ../shared/fixtures/real (never copied here)."""

import json
import re
import shutil
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from adjudication.models import FinalLabel
from annotation.models import Campaign
from tests.e2e.test_scheme_review import log_out

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]


def as_user(page, login, user):
    """Logs the current user out (if any) and logs `user` in through the log-in form."""
    if page.locator("form.logout").count():
        log_out(page)
    login(page, user)


def import_file(page, path, shots, name: str, fmt: str = ""):
    """Admin: Import -> upload (format detected unless given) -> the job page polls until done."""
    page.get_by_role("navigation").get_by_role("link", name="Import").click()
    page.get_by_label("File").set_input_files(str(path))
    if fmt:
        page.get_by_label("Format").select_option(fmt)
    page.get_by_role("button", name="Import").click()
    page.wait_for_url("**/problems/import/*/")
    page.wait_for_selector("#import-status[data-status=succeeded]", timeout=60_000)
    page.screenshot(path=str(shots / f"{name}.png"))


def approve_scheme(page, live_server, external_id: str, screenshot=None):
    """Admin: Marking schemes (the problem page's link), its latest version, Approve."""
    page.goto(f"{live_server.url}/rubrics/?problem={external_id}")
    page.locator("a.scheme-link", has_text=external_id).first.click()
    page.get_by_role("button", name=re.compile(r"^Approve version")).click()
    page.wait_for_selector(f"text=is now the approved scheme of {external_id}")
    if screenshot:
        page.screenshot(path=str(screenshot), full_page=True)


def set_up_campaign(page, name: str, experts, *, contest: str, generator: str, expect: int):
    """Admin: Campaigns -> New campaign (every item double-scored) -> members -> Add items."""
    page.get_by_role("navigation").get_by_role("link", name="Campaigns").click()
    page.get_by_role("link", name="New campaign").click()
    page.get_by_label("Name").fill(name)
    page.get_by_label("Double share").fill("1")
    page.get_by_role("button", name=re.compile("Create|Save")).click()
    page.wait_for_selector(f"text=Campaign {name} created.")
    for expert in experts:
        page.get_by_label("User name").fill(expert.username)
        page.get_by_role("button", name="Add member").click()
        page.wait_for_selector(f"text={expert.username} added.")
    page.get_by_role("link", name="Add items").click()
    page.get_by_label("Contest").select_option(contest)
    page.get_by_label("Generator").select_option(generator)
    page.get_by_role("button", name="Preview").click()
    page.wait_for_selector(f"text={expect} proofs match")
    page.get_by_role("button", name=f"Create {expect} items").click()
    page.wait_for_selector(f"text={expect} item(s) created")
    return Campaign.objects.get(name=name)


def grade_all(page, campaign, decide, shots, who: str) -> list[str]:
    """Expert: Grading -> the campaign -> Grade next, then each item in turn. `decide(page,
    problem_id)` sets the grade on the open page; Enter submits and the next item opens."""
    page.get_by_role("navigation").get_by_role("link", name="Grading").click()
    page.get_by_role("link", name=campaign.name).click()
    grade_next = re.compile("Grade next")  # a link today, perhaps a form's button tomorrow
    page.get_by_role("link", name=grade_next).or_(
        page.get_by_role("button", name=grade_next)
    ).first.click()
    seen = []
    while True:
        done = page.get_by_text(f"No work left in {campaign.name}")
        page.locator("#proof-text").or_(done).wait_for()
        if page.locator("#proof-text").count() == 0:
            return seen
        expect(page.locator("#computed-score")).not_to_have_text("\u2013")
        problem_id = re.search(r"Grading · (\S+)", page.title()).group(1)
        decide(page, problem_id)
        if not seen:  # the first item each expert grades, to look at; the rest are alike
            page.screenshot(path=str(shots / f"{who}-{problem_id}.png"))
        seen.append(problem_id)
        page.keyboard.press("Enter")
        page.wait_for_url(lambda url, left=page.url: url != left)


def open_the_case(page, shots, name: str):
    """Adjudicator: Adjudication -> the one open case."""
    page.get_by_role("navigation").get_by_role("link", name="Adjudication").click()
    cases = page.locator("#case-queue a", has_text="#")
    expect(cases).to_have_count(1)
    cases.first.click()
    page.wait_for_selector("#proof-typeset")
    assert page.locator(".judgement").count() == 2
    page.screenshot(path=str(shots / f"{name}.png"))


def export_and_download(page, campaign, fmt: str, file_type: str, tmp_path):
    """Researcher: Exports -> campaign, format, file type -> Export -> wait -> download."""
    page.get_by_role("navigation").get_by_role("link", name="Exports").click()
    page.get_by_label("Campaign", exact=True).select_option(campaign.slug)
    page.get_by_label("Format", exact=True).select_option(fmt)
    page.get_by_label("File type").select_option(file_type)
    page.get_by_role("button", name="Export").click()
    page.wait_for_selector("#job-status .job-status:has-text('Done')", timeout=60_000)
    with page.expect_download() as info:
        page.locator("a.download").first.click()
    path = tmp_path / info.value.suggested_filename
    info.value.save_as(path)
    return path


def load_offline(kind: str, path, cache):
    """Loads an exported file with `datasets`, offline, into a fresh cache."""
    import datasets

    return datasets.load_dataset(kind, data_files=str(path), split="train", cache_dir=str(cache))


@pytest.fixture
def offline_hf(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    return tmp_path / "hf-cache"


@pytest.fixture
def cast(admin_user, expert_user, expert2_user, adjudicator_user, researcher_user):
    return {
        "admin": admin_user,
        "experts": (expert_user, expert2_user),
        "adjudicator": adjudicator_user,
        "researcher": researcher_user,
    }


# --- IMO-ProofBench + DeepSeekMath-V2: band schemes -------------------------------------------

# The band each expert picks (its points are its key): they agree on two proofs and disagree
# on PB-Advanced-002 (Partial 1 against Almost 6, beyond the tolerance of 1).
BANDS = {
    "expert1": {"PB-Basic-002": "7", "PB-Advanced-002": "1", "PB-Advanced-011": "0"},
    "expert2": {"PB-Basic-002": "7", "PB-Advanced-002": "6", "PB-Advanced-011": "0"},
}


def test_imo_proofbench_with_deepseek_math_v2_outputs(
    page,
    live_server,
    login,
    cast,
    real_fixtures,
    celery_worker_process,
    screenshot_dir,
    tmp_path,
    offline_hf,
):
    shots = screenshot_dir
    as_user(page, login, cast["admin"])
    import_file(page, real_fixtures / "imobench" / "proofbench_v2.csv", shots, "dr-1")
    assert "60" in page.locator("table.counts").inner_text()
    outputs = real_fixtures / "deepseek_math_v2" / "imo_proofbench_outputs_sample.jsonl"
    import_file(page, outputs, shots, "dr-2-deepseek")
    assert page.locator("table.counts tr", has_text="Proofs").inner_text().split()[1] == "3"

    # the guidelines of the three problems DeepSeekMath-V2 answered, approved as band schemes
    for n, problem_id in enumerate(BANDS["expert1"]):
        approve_scheme(page, live_server, problem_id, shots / "dr-3-approved.png" if n else None)
    campaign = set_up_campaign(
        page,
        "IMO-ProofBench rehearsal",
        cast["experts"],
        contest="IMO-ProofBench",
        generator="DeepSeekMath-V2",
        expect=3,
    )
    page.screenshot(path=str(shots / "dr-4-campaign.png"), full_page=True)
    assert "no approved marking scheme" not in page.content()

    def pick_band(who):
        def decide(page, problem_id):
            assert page.locator(".cp-row.band").count() == 4  # the bands are shown
            assert page.get_by_text("Grade band").is_visible()
            assert not page.locator(".bands .katex-error").count()  # \lcm in PB-Advanced-002
            key = BANDS[who][problem_id]
            page.keyboard.press(key)
            expect(page.locator("#computed-score")).to_have_text(key)
            assert page.locator(f"input[name=score][value='{key}']").is_checked()

        return decide

    for expert in cast["experts"]:
        as_user(page, login, expert)
        seen = grade_all(page, campaign, pick_band(expert.username), shots, f"dr-5-{expert}")
        assert sorted(seen) == sorted(BANDS["expert1"])

    as_user(page, login, cast["adjudicator"])
    open_the_case(page, shots, "dr-6-case")
    assert "PB-Advanced-002" in page.locator("body").inner_text()
    # the scheme as its bands, typeset (its raw text runs "(Almost)" into a Partial line)
    scheme = page.locator("details.pane", has_text="Marking scheme")
    assert scheme.locator("#band-partial").is_visible() and scheme.locator("#band-almost").count()
    assert "Considered the non-intersecting cycles" in scheme.locator("#band-partial").inner_text()
    assert scheme.locator(".katex").count() and not scheme.locator(".katex-error").count()
    # Expert A's Partial stands: the proof's progress is real, its main lemma is unproven
    accept = page.locator("#accept-form")
    accept.get_by_label(re.compile(r": 1$")).check()
    accept.get_by_label("Rationale").fill("The key lemma is asserted, not proved: Partial.")
    accept.get_by_role("button", name="Accept").click()
    page.wait_for_selector("#resolution")
    page.screenshot(path=str(shots / "dr-7-resolved.png"))
    label = FinalLabel.objects.get(
        item__campaign=campaign, item__proof__problem__external_id="PB-Advanced-002"
    )
    assert (label.value, label.source) == (Decimal(1), "adjudication")

    as_user(page, login, cast["researcher"])
    jsonl = export_and_download(page, campaign, "proofbench", "jsonl", tmp_path)
    parquet = export_and_download(page, campaign, "dv", "parquet", tmp_path)
    page.screenshot(path=str(shots / "dr-8-exports.png"), full_page=True)

    rows = {r["problem_id"]: r for r in load_offline("json", jsonl, offline_hf)}
    assert set(rows) == set(BANDS["expert1"])
    disputed = rows["PB-Advanced-002"]
    assert (disputed["expert_rating"], disputed["label_source"]) == (1, "adjudication")
    # both judgements stand behind the adjudicated label, though the adjudicator accepted one
    assert disputed["judgements"] == 2 and disputed["generator"] == "DeepSeekMath-V2"
    assert rows["PB-Basic-002"]["expert_rating"] == 7
    assert "(Partial)" in disputed["marking_scheme"]
    dv = {r["problem_id"]: r for r in load_offline("parquet", parquet, offline_hf)}
    assert (dv["PB-Advanced-002"]["score"], dv["PB-Advanced-002"]["label_source"]) == (
        0.0,
        "adjudication",
    )
    assert dv["PB-Advanced-002"]["native_score"] == 1.0
    assert dv["PB-Basic-002"]["score"] == 1.0 and dv["PB-Advanced-011"]["score"] == 0.0


# --- MathArena USAMO 2025: points per step ------------------------------------------------


def usamo_proofs(real_fixtures, path):
    """Two proofs of USAMO 2025 P1 in Proofmark JSONL, made from MathArena's own solution (its
    per-answer model outputs are on Hugging Face only): the whole of it, and its first part,
    which sets up the digits and asserts the bound without proving it."""
    solution = (real_fixtures / "matharena_usamo2025" / "solutions" / "1.tex").read_text()
    head = solution.split("Note that the numerator")[0]
    lines = [
        {"kind": "proof", "problem": "USAMO-2025-P1", "generator": "rehearsal-model",
         "sample": "0", "text": solution},
        {"kind": "proof", "problem": "USAMO-2025-P1", "generator": "rehearsal-model",
         "sample": "1", "text": head.rstrip() + "\n\nThe bound on each digit is clear."},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_matharena_usamo_2025_with_points_per_step(
    page,
    live_server,
    login,
    cast,
    real_fixtures,
    celery_worker_process,
    screenshot_dir,
    tmp_path,
    offline_hf,
):
    shots = screenshot_dir
    folder = shutil.make_archive(
        str(tmp_path / "usamo_2025"), "zip", real_fixtures, "matharena_usamo2025"
    )
    as_user(page, login, cast["admin"])
    import_file(page, folder, shots, "dr-usamo-1", fmt="matharena")
    assert "6" in page.locator("table.counts").inner_text()
    proofs = usamo_proofs(real_fixtures, tmp_path / "usamo_proofs.jsonl")
    import_file(page, proofs, shots, "dr-usamo-2-proofs")
    approve_scheme(page, live_server, "USAMO-2025-P1", shots / "dr-usamo-3-approved.png")
    campaign = set_up_campaign(
        page,
        "USAMO 2025 rehearsal",
        cast["experts"],
        contest="USAMO",
        generator="rehearsal-model",
        expect=2,
    )

    # points per step: j focuses the next checkpoint, a digit gives it points. The whole
    # solution gets 1 + 3 + 2 + 1; the cut one 1 + 3 from expert1, while expert2 also credits
    # the bound it asserts (1 + 3 + 2): 4 against 6, beyond the tolerance of 1.
    awards = {"expert1": ["1", "3", "0", "0"], "expert2": ["1", "3", "2", "0"]}

    def by_steps(who):
        def decide(page, problem_id):
            rows = page.locator(".cp-row[data-kind=award]")
            assert rows.count() == 4
            assert "Interchanging the floor and mod" in rows.nth(1).inner_text()
            whole = (
                "The bound on each digit is clear." not in page.locator("#proof-text").inner_text()
            )
            points = ["1", "3", "2", "1"] if whole else awards[who]
            for value in points:
                page.keyboard.press("j")
                page.keyboard.press(value)
            total = str(sum(int(v) for v in points))
            expect(page.locator("#computed-score")).to_have_text(total)
            page.keyboard.press("Escape")

        return decide

    for expert in cast["experts"]:
        as_user(page, login, expert)
        grade_all(page, campaign, by_steps(expert.username), shots, f"dr-usamo-4-{expert}")

    as_user(page, login, cast["adjudicator"])
    open_the_case(page, shots, "dr-usamo-5-case")
    assert page.locator("#awards tr.differs").count() == 1
    form = page.locator("#new-score-form")
    form.get_by_label("Score").select_option(label="4")
    form.get_by_label("Rationale").fill(
        "The closed form and the interchange are there; the bound is asserted, not proved."
    )
    form.get_by_role("button", name="Record new score").click()
    page.wait_for_selector("#resolution")
    page.screenshot(path=str(shots / "dr-usamo-6-resolved.png"))

    as_user(page, login, cast["researcher"])
    jsonl = export_and_download(page, campaign, "proofbench", "jsonl", tmp_path)
    parquet = export_and_download(page, campaign, "dv", "parquet", tmp_path)
    rows = {r["response_number"]: r for r in load_offline("json", jsonl, offline_hf)}
    # the adjudicator's 4, not the label policy's floor of the mean (5)
    assert (rows[1]["expert_rating"], rows[1]["label_source"]) == (4, "adjudication")
    assert (rows[0]["expert_rating"], rows[0]["label_source"]) == (7, "agreement")
    assert "Interchanging the floor and mod" in rows[1]["marking_scheme"]
    dv = sorted(load_offline("parquet", parquet, offline_hf), key=lambda r: r["score"])
    assert [(r["score"], r["label_source"]) for r in dv] == [
        (0.0, "adjudication"),
        (1.0, "agreement"),
    ]
