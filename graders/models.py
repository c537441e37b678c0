"""Automatic graders scored against the expert labels: an evaluation (imported predictions or an
endpoint run), its predictions and its failed calls.

The tables kept the names they had in the exports app (`db_table`), where these models lived
first. Writes go through graders.services; reads through graders.selectors.
"""

from django.conf import settings
from django.db import models

from annotation.scales import PredictionScale
from jobs.models import JobLiveness, JobStatus
from rubrics.models import TokenSpend, token_spend


class PredictionSource(models.TextChoices):
    PROOFGRADER_JSONL = (
        "proofgrader_jsonl",
        "ProofGrader-style JSONL {problem_id, generator, score}",
    )
    DEEPSEEK_OUTPUTS = "deepseek_outputs", "DeepSeekMath-V2 outputs (average_automatic_rating)"
    ENDPOINT = "endpoint", "A grader endpoint run over the campaign's labelled proofs"


class GraderEvaluation(JobLiveness):
    """An automatic grader's predictions for a campaign's proofs, and the report against the final
    labels. Predictions are on `prediction_scale` ("0-7" or "0-1")."""

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="grader_evaluations"
    )
    name = models.CharField(max_length=200, help_text="The grader, e.g. o3 REF+MS x5.")
    source = models.CharField(max_length=30, choices=PredictionSource.choices)
    prediction_scale = models.CharField(max_length=10, default=PredictionScale.ZERO_TO_SEVEN)
    aggregation = models.CharField(max_length=10, default="mean")
    runs = models.PositiveSmallIntegerField(default=1)
    endpoint = models.ForeignKey(
        "rubrics.LLMEndpoint", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Endpoint, model and prompt of an endpoint run."
    )
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(null=True, blank=True)
    counts = models.JSONField(default=dict, blank=True)
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        db_table = "exports_graderevaluation"
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} on {self.campaign_id}"

    @property
    def spend(self) -> TokenSpend:
        """An endpoint run's tokens and their cost at the endpoint's current prices."""
        return token_spend((self.endpoint, self.prompt_tokens, self.completion_tokens))


class GraderPrediction(models.Model):
    """One run's score of one item (k runs of a grader give k rows per item)."""

    evaluation = models.ForeignKey(
        GraderEvaluation, on_delete=models.CASCADE, related_name="predictions"
    )
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="+")
    run_index = models.PositiveSmallIntegerField(default=0)
    score = models.FloatField()
    assessment = models.TextField(blank=True)
    errors = models.JSONField(default=list, blank=True)

    class Meta:
        db_table = "exports_graderprediction"
        ordering = ["evaluation_id", "item_id", "run_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "item", "run_index"], name="prediction_unique_run"
            )
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_id}: item {self.item_id} run {self.run_index} = {self.score}"


class GraderPredictionFailure(models.Model):
    """A grader call of an endpoint run that gave no usable prediction: the raw reply and why
    (token limit, unclosed reasoning, no integer score from 0 to 7, a provider error). A retry
    asks again only for these; a success replaces the failure with a GraderPrediction."""

    evaluation = models.ForeignKey(
        GraderEvaluation, on_delete=models.CASCADE, related_name="failures"
    )
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="+")
    run_index = models.PositiveSmallIntegerField(default=0)
    reason = models.TextField()
    raw_reply = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=30, blank=True)
    created_at = models.DateTimeField(auto_now=True)

    class Meta:
        db_table = "exports_graderpredictionfailure"
        ordering = ["evaluation_id", "item_id", "run_index"]
        constraints = [
            models.UniqueConstraint(
                fields=["evaluation", "item", "run_index"], name="prediction_failure_unique_run"
            )
        ]

    def __str__(self) -> str:
        return f"{self.evaluation_id}: item {self.item_id} run {self.run_index} failed"


# --- The evaluator design space: a grid of grader configurations in one job -----------------


class GridContext(models.TextChoices):
    """What the grader sees beside the problem and the proof (ProofBench's contexts)."""

    NONE = "none", "Problem and proof only"
    REFERENCE = "reference", "With a reference solution"
    SCHEME = "scheme", "With the marking scheme"
    BOTH = "both", "With a reference solution and the marking scheme"


class GridInstruction(models.TextChoices):
    """How the grader is told to count (both keep the `<score>` contract of grade_proof@v2)."""

    FLEXIBLE = "flexible", "Flexible: other valid routes earn the same credit"
    STRICT = "strict", "Strict: credit only for what is written and justified"


class CellState(models.TextChoices):
    WAITING = "waiting", "Waiting"
    OVER_BUDGET = "over_budget", "Not started: over the budget"
    DONE = "done", "Done"


class GraderGrid(JobLiveness):
    """A design-space study: every (endpoint, context, instruction) cell graded over the
    campaign's labelled proofs `runs` times, in one job; the report ranks the cells."""

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="grader_grids"
    )
    name = models.CharField(max_length=200)
    runs = models.PositiveSmallIntegerField(default=1)
    aggregation = models.CharField(max_length=10, default="mean")
    budget = models.DecimalField(
        max_digits=10,
        decimal_places=2,
        null=True,
        blank=True,
        help_text="US dollars a cell may cost at most (estimated before it starts).",
    )
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    round = models.PositiveSmallIntegerField(
        default=0,
        help_text="Raised by each retry: a failed call of an earlier round is asked again.",
    )
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} on {self.campaign_id}"


class GraderGridCell(models.Model):
    """One configuration of a grid: endpoint (backbone) x context x instruction, its estimated
    cost before it started and the tokens it spent."""

    grid = models.ForeignKey(GraderGrid, on_delete=models.CASCADE, related_name="cells")
    endpoint = models.ForeignKey("rubrics.LLMEndpoint", on_delete=models.PROTECT, related_name="+")
    context = models.CharField(max_length=12, choices=GridContext.choices)
    instruction = models.CharField(max_length=12, choices=GridInstruction.choices)
    state = models.CharField(max_length=12, choices=CellState.choices, default=CellState.WAITING)
    estimated_cost = models.DecimalField(max_digits=12, decimal_places=4, null=True, blank=True)
    estimated_tokens = models.PositiveBigIntegerField(default=0)
    parameters = models.JSONField(default=dict, blank=True)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)

    class Meta:
        ordering = ["grid_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["grid", "endpoint", "context", "instruction"], name="grid_cell_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.endpoint_id} / {self.context} / {self.instruction}"

    @property
    def label(self) -> str:
        return f"{self.endpoint.name} · {self.context} · {self.instruction}"

    @property
    def spend(self) -> TokenSpend:
        return token_spend((self.endpoint, self.prompt_tokens, self.completion_tokens))


class GraderGridCall(models.Model):
    """One call of a cell: (proof, run). A score exactly when the reply kept the contract; else
    the reason and the raw reply. A stored score is never asked again; a failure is asked again
    by the next run of the grid (a retry)."""

    cell = models.ForeignKey(GraderGridCell, on_delete=models.CASCADE, related_name="calls")
    item = models.ForeignKey("annotation.Item", on_delete=models.CASCADE, related_name="+")
    run_index = models.PositiveSmallIntegerField(default=0)
    score = models.FloatField(null=True, blank=True)
    reason = models.TextField(blank=True)
    raw_reply = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=30, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    round = models.PositiveSmallIntegerField(default=0, help_text="The grid's round that asked.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["cell_id", "item_id", "run_index"]
        constraints = [
            models.UniqueConstraint(fields=["cell", "item", "run_index"], name="grid_call_unique"),
            models.CheckConstraint(
                condition=models.Q(score__isnull=False) | ~models.Q(reason=""),
                name="grid_call_score_or_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"cell {self.cell_id}: item {self.item_id} run {self.run_index}"


# --- Pairwise picks: one endpoint asked which of two proofs is better, in both orders --------


class PickSource(models.TextChoices):
    PAIRS = "pairs", "The pairs of a pairwise campaign"
    LABELLED = "labelled", "The campaign's labelled proofs, paired per problem"


class PickOrder(models.TextChoices):
    FORWARD = "forward", "proof a shown first"
    BACKWARD = "backward", "proof b shown first"


class PairwisePickRun(JobLiveness):
    """A pairwise grader run: for every pair of proofs of one problem (a pairwise campaign's
    pairs, or a campaign's labelled proofs paired per problem), one endpoint asked which is better,
    once with proof a shown first and once with proof b shown first. The position probe
    (graders.trust.position_probe) and the pairwise selection read its picks."""

    campaign = models.ForeignKey(
        "annotation.Campaign", on_delete=models.CASCADE, related_name="pick_runs"
    )
    name = models.CharField(max_length=200)
    source = models.CharField(max_length=10, choices=PickSource.choices)
    endpoint = models.ForeignKey("rubrics.LLMEndpoint", on_delete=models.PROTECT, related_name="+")
    parameters = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=12, choices=JobStatus.choices, default=JobStatus.PENDING)
    processed = models.PositiveIntegerField(default=0)
    total = models.PositiveIntegerField(default=0)
    round = models.PositiveSmallIntegerField(
        default=0,
        help_text="Raised by each retry: a failed call of an earlier round is asked again.",
    )
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.name} on {self.campaign_id}"

    @property
    def spend(self) -> TokenSpend:
        return token_spend((self.endpoint, self.prompt_tokens, self.completion_tokens))


class PairwisePickRecord(models.Model):
    """One call of a pick run: a pair (proof_a has the smaller id) in one order. `pick` names the
    proof (a, b or tie), never the position, exactly when the reply kept the contract; else
    the reason and the raw reply. A pick is never asked again; a failure only by a retry."""

    run = models.ForeignKey(PairwisePickRun, on_delete=models.CASCADE, related_name="records")
    proof_a = models.ForeignKey("problems.Proof", on_delete=models.CASCADE, related_name="+")
    proof_b = models.ForeignKey("problems.Proof", on_delete=models.CASCADE, related_name="+")
    order = models.CharField(max_length=8, choices=PickOrder.choices)
    pick = models.CharField(max_length=3, blank=True)
    reason = models.TextField(blank=True)
    raw_reply = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=30, blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    round = models.PositiveSmallIntegerField(default=0, help_text="The run's round that asked.")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "proof_a_id", "proof_b_id", "order"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "proof_a", "proof_b", "order"], name="pick_record_unique"
            ),
            models.CheckConstraint(
                condition=models.Q(proof_a__lt=models.F("proof_b")),
                name="pick_record_canonical_order",
            ),
            models.CheckConstraint(
                condition=models.Q(pick__in=["a", "b", "tie"])
                | (models.Q(pick="") & ~models.Q(reason="")),
                name="pick_record_pick_or_reason",
            ),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id}: {self.proof_a_id} vs {self.proof_b_id} ({self.order})"
