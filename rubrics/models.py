"""Marking schemes: versioned per problem, with provenance, ratings and approval."""

from dataclasses import dataclass
from decimal import Decimal

from django.conf import settings
from django.core.validators import URLValidator
from django.db import models
from django.db.models import Q

from jobs.models import JobLiveness, JobStatus

MILLION = Decimal(1_000_000)


class SchemeMethod(models.TextChoices):
    MANUAL = "manual", "Written by hand"
    IMPORTED = "imported", "Imported"
    PROOFBENCH = "proofbench", "ProofBench single call"
    REFGRADER_PLAIN = "refgrader_plain", "RefGrader: plain"
    REFGRADER_APPROACHABILITY = "refgrader_approachability", "RefGrader: approachability"
    REFGRADER_MILESTONES = "refgrader_milestones", "RefGrader: milestones"
    REFGRADER_HYBRID = "refgrader_hybrid", "RefGrader: hybrid"


class SchemeStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    APPROVED = "approved", "Approved"
    FROZEN = "frozen", "Frozen"


class MarkingScheme(models.Model):
    """One version of a problem's marking scheme. Grades point at the exact row they used."""

    problem = models.ForeignKey(
        "problems.Problem", on_delete=models.CASCADE, related_name="marking_schemes"
    )
    version = models.PositiveIntegerField()
    method = models.CharField(max_length=40, choices=SchemeMethod.choices)
    status = models.CharField(
        max_length=20, choices=SchemeStatus.choices, default=SchemeStatus.DRAFT, db_index=True
    )
    text = models.TextField(help_text="The scheme as Markdown, as written or generated.")
    guidelines = models.TextField(
        blank=True, help_text="Free grading guidance kept when it does not parse into checkpoints."
    )
    structure = models.JSONField(
        default=dict, blank=True, help_text="The parsed structure (rubrics.structure)."
    )
    validation = models.JSONField(
        default=list, blank=True, help_text="Validation messages, in words, for the person."
    )
    is_valid = models.BooleanField(default=False)
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="next_versions"
    )
    provenance = models.JSONField(
        default=dict,
        blank=True,
        help_text="Model, prompt version, parameters, token usage; or the import's source.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    approved_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    approved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["problem_id", "-version"]
        constraints = [
            models.UniqueConstraint(fields=["problem", "version"], name="scheme_problem_version"),
            models.UniqueConstraint(
                fields=["problem"],
                condition=Q(status=SchemeStatus.APPROVED),
                name="scheme_one_approved_per_problem",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} scheme v{self.version} ({self.status})"


class SchemeRating(models.Model):
    """An expert's 0-3 quality rating of one scheme version (ProofBench's scale)."""

    scheme = models.ForeignKey(MarkingScheme, on_delete=models.CASCADE, related_name="ratings")
    rater = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="scheme_ratings"
    )
    score = models.PositiveSmallIntegerField()
    comment = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["scheme", "rater"], name="rating_one_per_rater"),
            models.CheckConstraint(condition=Q(score__lte=3), name="rating_score_0_3"),
        ]

    def __str__(self) -> str:
        return f"{self.rater_id} rates scheme {self.scheme_id}: {self.score}"


# Generation


def _token_price(tokens: str) -> models.DecimalField:
    return models.DecimalField(
        max_digits=10,
        decimal_places=4,
        null=True,
        blank=True,
        help_text=f"US dollars per million {tokens} tokens; empty when unknown (give both "
        "prices or neither).",
    )


class LLMEndpoint(models.Model):
    """A named language-model profile, managed by admins. The key itself never lives here:
    `api_key_env` names the environment variable (or setting) that holds it."""

    name = models.CharField(max_length=100, unique=True)
    base_url = models.CharField(
        max_length=500,
        validators=[URLValidator(schemes=["http", "https"])],
        help_text="OpenAI-compatible base URL, e.g. http://127.0.0.1:8000/v1.",
    )
    model = models.CharField(max_length=200)
    api_key_env = models.CharField(
        max_length=100,
        default="LLM_API_KEY",
        help_text="Name of the environment variable (or setting) holding the API key.",
    )
    temperature = models.FloatField(null=True, blank=True)
    max_tokens = models.PositiveIntegerField(null=True, blank=True)
    timeout_seconds = models.FloatField(default=600)
    concurrency = models.PositiveSmallIntegerField(default=4)
    max_attempts = models.PositiveSmallIntegerField(
        default=4, help_text="Requests per call before a transient error counts as a failure."
    )
    extra = models.JSONField(
        default=dict, blank=True, help_text="Extra request body fields (e.g. top_p)."
    )
    input_price_per_million = _token_price("input (prompt)")
    output_price_per_million = _token_price("output (completion)")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "LLM endpoint"
        constraints = [
            models.CheckConstraint(condition=Q(concurrency__gte=1), name="endpoint_concurrency"),
            models.CheckConstraint(condition=Q(max_attempts__gte=1), name="endpoint_attempts"),
            models.CheckConstraint(condition=Q(timeout_seconds__gt=0), name="endpoint_timeout"),
            models.CheckConstraint(
                condition=Q(
                    input_price_per_million__isnull=True, output_price_per_million__isnull=True
                )
                | Q(
                    input_price_per_million__isnull=False,
                    output_price_per_million__isnull=False,
                    input_price_per_million__gte=0,
                    output_price_per_million__gte=0,
                ),
                name="endpoint_prices",
                violation_error_message="Give both token prices (zero or more) or neither.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.model})"

    def token_cost(self, *, prompt_tokens: int, completion_tokens: int) -> Decimal | None:
        """What so many tokens cost at this endpoint's prices, in US dollars; None when it has
        no prices."""
        if self.input_price_per_million is None or self.output_price_per_million is None:
            return None
        spent = (
            prompt_tokens * self.input_price_per_million
            + completion_tokens * self.output_price_per_million
        )
        return spent / MILLION


@dataclass(frozen=True)
class TokenSpend:
    """Tokens spent at one or more endpoints, and what they cost in US dollars at each
    endpoint's current prices (None unless every endpoint has prices). Every run page shows it
    with rubrics/_token_spend.html."""

    prompt_tokens: int
    completion_tokens: int
    cost: Decimal | None
    endpoints: tuple[LLMEndpoint, ...]

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def token_spend(*parts: tuple[LLMEndpoint | None, int, int]) -> TokenSpend:
    """The spend of (endpoint, prompt tokens, completion tokens) parts."""
    costs = [
        None
        if endpoint is None
        else endpoint.token_cost(prompt_tokens=prompt, completion_tokens=completion)
        for endpoint, prompt, completion in parts
    ]
    return TokenSpend(
        prompt_tokens=sum(prompt for _, prompt, _ in parts),
        completion_tokens=sum(completion for _, _, completion in parts),
        cost=None if not costs or None in costs else sum(costs, Decimal(0)),
        endpoints=tuple(dict.fromkeys(endpoint for endpoint, _, _ in parts if endpoint)),
    )


GENERATION_METHODS = [
    (value, label)
    for value, label in SchemeMethod.choices
    if value == SchemeMethod.PROOFBENCH or value.startswith("refgrader_")
]


class GeneratorConfig(models.Model):
    """Method + prompt version + endpoint. Once frozen it never changes, and schemes generated
    for a campaign come from one frozen configuration."""

    name = models.CharField(max_length=150, unique=True)
    method = models.CharField(max_length=40, choices=GENERATION_METHODS)
    prompt_version = models.CharField(max_length=20, default="v1")
    endpoint = models.ForeignKey(LLMEndpoint, on_delete=models.PROTECT, related_name="configs")
    frozen_at = models.DateTimeField(null=True, blank=True)
    frozen_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    frozen_parameters = models.JSONField(
        default=dict, blank=True, help_text="The endpoint's model and parameters when frozen."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-frozen_at", "name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(frozen_at__isnull=True) | ~Q(frozen_parameters={}),
                name="config_frozen_has_parameters",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name}{' (frozen)' if self.is_frozen else ''}"

    @property
    def is_frozen(self) -> bool:
        return self.frozen_at is not None


class GenerationRun(models.Model):
    """One launch of a generator configuration over a selection of problems."""

    config = models.ForeignKey(GeneratorConfig, on_delete=models.PROTECT, related_name="runs")
    method = models.CharField(max_length=40, choices=GENERATION_METHODS)
    prompt_version = models.CharField(max_length=20)
    parameters = models.JSONField(
        default=dict, blank=True, help_text="Endpoint name, model and parameters used."
    )
    reuse_steps = models.BooleanField(
        default=True, help_text="Reuse cached workflow steps instead of calling the model again."
    )
    status = models.CharField(
        max_length=20, choices=JobStatus.choices, default=JobStatus.PENDING, db_index=True
    )
    total = models.PositiveIntegerField(default=0)
    done_count = models.PositiveIntegerField(default=0)
    failed_count = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"generation run {self.pk} ({self.method}, {self.status})"

    @property
    def finished(self) -> bool:
        return self.status in (JobStatus.SUCCEEDED, JobStatus.FAILED)

    @property
    def percent(self) -> int:
        """Share of the problems finished, done or failed."""
        return int(100 * (self.done_count + self.failed_count) / self.total) if self.total else 0

    @property
    def done_percent(self) -> int:
        return int(100 * self.done_count / self.total) if self.total else 0

    @property
    def failed_percent(self) -> int:
        return self.percent - self.done_percent

    @property
    def spend(self) -> TokenSpend:
        """The tokens spent so far and their cost at the endpoint's current prices."""
        return token_spend((self.config.endpoint, self.prompt_tokens, self.completion_tokens))


class GenerationTask(JobLiveness):
    """One problem of a run: one Celery job, its attempts, the raw replies and the scheme."""

    run = models.ForeignKey(GenerationRun, on_delete=models.CASCADE, related_name="tasks")
    problem = models.ForeignKey(
        "problems.Problem", on_delete=models.CASCADE, related_name="generation_tasks"
    )
    status = models.CharField(
        max_length=20, choices=JobStatus.choices, default=JobStatus.PENDING, db_index=True
    )
    error = models.TextField(blank=True)
    raw_responses = models.JSONField(
        default=list, blank=True, help_text="The model calls of the last attempt, raw."
    )
    usage = models.JSONField(default=dict, blank=True)
    scheme = models.ForeignKey(
        MarkingScheme,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="generation_tasks",
        help_text="The version the task made, or the existing version with the same text.",
    )
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["run_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "problem"], name="generation_task_per_problem"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} / problem {self.problem_id}: {self.status}"


class GenerationStep(models.Model):
    """The stored output of one workflow step for one problem. Steps that do not depend on a
    student proof run once per problem: a later run with the same inputs reuses the row."""

    problem = models.ForeignKey(
        "problems.Problem", on_delete=models.CASCADE, related_name="generation_steps"
    )
    step = models.CharField(max_length=100, help_text='e.g. "cluster", "steps:C1", "rubric:C1".')
    prompt = models.CharField(max_length=100, help_text="Template key, e.g. refgrader_cluster@v1.")
    model = models.CharField(max_length=200)
    input_hash = models.CharField(
        max_length=64, help_text="SHA-256 of the rendered messages and the model's parameters."
    )
    output = models.TextField()
    parsed = models.JSONField(default=dict, blank=True)
    usage = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["problem_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["problem", "step", "prompt", "model", "input_hash"],
                name="generation_step_cache_key",
            )
        ]

    def __str__(self) -> str:
        return f"{self.problem_id} {self.step} ({self.prompt})"
