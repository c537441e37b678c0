"""Forms of the corpus pages."""

from pathlib import Path

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile

from problems.importers import FORMATS, sniff

UPLOAD_SUFFIXES = (".jsonl", ".json", ".csv", ".parquet", ".arrow", ".zip")
FORMAT_LABELS = {
    "proofbench": "ProofBench rows (JSONL, CSV, Parquet or Arrow)",
    "imobench": "IMO-ProofBench CSV",
    "gradingbench": "IMO-GradingBench expert gradings (CSV, Parquet)",
    "matharena": "MathArena competition folder (.zip)",
    "matharena_outputs": "MathArena graded outputs (Parquet, JSONL)",
    "opc": "Open Proof Corpus (raw, solved or training files)",
    "deepseek": "DeepSeekMath-V2 inputs/outputs",
    "jsonl": "Proofmark JSONL (problems, proofs, analyses)",
}
LICENCE_HELP = (
    "The licence of the whole source (e.g. CC-BY-4.0), recorded on every record that states "
    "none. Blank: the licence of the format's public dataset."
)


def megabytes(size: int) -> str:
    return f"{size / 1024 / 1024:,.1f} MB"


def check_upload(upload: UploadedFile) -> list[str]:
    """What is wrong with an uploaded corpus file's size and name, in words (shared by the page
    and the API)."""
    problems = []
    limit = settings.PROOFMARK_MAX_UPLOAD_BYTES
    if upload.size > limit:
        problems.append(
            f"The file is {megabytes(upload.size)}; the upload limit is {megabytes(limit)}. "
            "Import larger files with `manage.py import_corpus` on the server."
        )
    if upload.size == 0:
        problems.append("The file is empty: nothing to import.")
    if Path(upload.name).suffix.lower() not in UPLOAD_SUFFIXES:
        problems.append(
            f"{Path(upload.name).name}: upload a {', '.join(UPLOAD_SUFFIXES)} file "
            "(a folder such as a MathArena competition goes in a .zip)."
        )
    return problems


SKIP_UNSTORABLE_HELP = (
    "Import the rest of a file whose lines hold characters the database cannot store (a NUL, "
    "bytes that are not UTF-8): those records fail alone, each named in the report. Unticked, "
    "such a file is refused with its lines."
)


def sniff_upload(upload: UploadedFile, fmt: str, *, skip_unstorable: bool = False) -> list[str]:
    """What the start of an upload shows to be wrong (problems.importers.sniff), so that an
    obviously wrong file is refused at once rather than failing in its job; read for `fmt` (blank:
    detect); its lines the database cannot store refused unless `skip_unstorable`. Shared by the
    page and the API, once the size and name are right."""
    problem = sniff(upload.file, upload.name, upload.size, fmt, unstorable_ok=skip_unstorable)
    return [f"{Path(upload.name).name}: {problem}"] if problem else []


class ImportUploadForm(forms.Form):
    file = forms.FileField(help_text="JSONL, JSON, CSV, Parquet, or a .zip of a folder.")
    format = forms.ChoiceField(
        choices=[("", "Detect from the file")] + [(name, FORMAT_LABELS[name]) for name in FORMATS],
        required=False,
    )
    licence = forms.CharField(
        max_length=100,
        required=False,
        help_text=LICENCE_HELP,
    )
    dry_run = forms.BooleanField(
        required=False, label="Dry run: report what would change, write nothing"
    )
    skip_unstorable = forms.BooleanField(
        required=False,
        label="Import the rest if some lines cannot be stored",
        help_text=SKIP_UNSTORABLE_HELP,
    )

    def clean_file(self):
        upload = self.cleaned_data["file"]
        problems = check_upload(upload)
        if problems:
            raise forms.ValidationError(problems)
        return upload

    def clean(self):
        data = super().clean()
        if data.get("file") is not None and "format" in data:
            problems = sniff_upload(
                data["file"], data["format"], skip_unstorable=data.get("skip_unstorable", False)
            )
            if problems:
                self.add_error("file", problems)
        return data
