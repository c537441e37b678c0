"""python manage.py export_dataset --campaign SLUG --format F --file-type T --out PATH
[--layout hf]"""

import json
import shutil
import tempfile
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from annotation.models import Campaign
from exports.formats import FORMATS, ExportError, ExportOptions
from exports.services import companion_paths, confidence_refresh, dataset_write
from exports.services.datasets import layout_check
from exports.writers import FILE_TYPES


class Command(BaseCommand):
    help = (
        "Exports a campaign's labelled dataset to PATH, with its manifest (PATH + "
        ".manifest.json) and dataset card (PATH + .README.md) beside it; with --layout hf, "
        "PATH is a folder written as a Hugging Face dataset repository (data/<split>-*.<type>, "
        "README.md with its YAML header, manifest.json)."
    )
    # Like import_corpus: the system checks (template tags, URLs) cost more than a small export.
    requires_system_checks = []

    def add_arguments(self, parser):
        parser.add_argument("--campaign", required=True, help="Campaign slug.")
        parser.add_argument("--format", required=True, choices=FORMATS)
        parser.add_argument("--file-type", required=True, choices=FILE_TYPES)
        parser.add_argument("--out", required=True, type=Path)
        parser.add_argument(
            "--layout",
            choices=["file", "hf"],
            default="file",
            help="hf: --out is a folder, a Hugging Face dataset repository (jsonl or parquet).",
        )
        parser.add_argument("--contest", default="")
        parser.add_argument("--year", type=int)
        parser.add_argument("--generator", default="")
        parser.add_argument(
            "--label-source",
            action="append",
            default=[],
            dest="label_sources",
            help="Keep labels from this source (repeatable).",
        )
        parser.add_argument("--min-agreement", type=float)
        parser.add_argument("--test-fraction", type=float)
        parser.add_argument("--split-seed", type=int, default=0)
        parser.add_argument("--split", choices=["train", "test"], default="")
        parser.add_argument("--cuts", type=int, nargs=2, default=[5, 7], metavar=("HALF", "ONE"))
        parser.add_argument(
            "--expert-names",
            action="store_true",
            help="Usernames instead of pseudonyms in the annotations and judgements formats.",
        )

    def handle(self, *args, **opts):
        try:
            campaign = Campaign.objects.get(slug=opts["campaign"])
        except Campaign.DoesNotExist as exc:
            raise CommandError(f"no campaign with slug {opts['campaign']!r}") from exc
        try:
            options = ExportOptions.from_dict(
                {
                    k: opts[k]
                    for k in (
                        "contest",
                        "year",
                        "generator",
                        "label_sources",
                        "min_agreement",
                        "test_fraction",
                        "split_seed",
                        "split",
                        "cuts",
                        "expert_names",
                    )
                }
            )
            if opts["layout"] == "hf":
                layout_check(layout="hf", file_type=opts["file_type"])
                if opts["out"].exists() and any(opts["out"].iterdir()):
                    raise CommandError(f"{opts['out']}: not empty (the folder is written anew)")
            confidence_refresh(campaign_id=campaign.pk)  # a stale fit is refitted first
            if opts["layout"] == "hf":
                self.hf_write(campaign, options, opts)
                return
            manifest = dataset_write(
                campaign=campaign,
                fmt=opts["format"],
                file_type=opts["file_type"],
                options=options,
                out=opts["out"],
            )
        except ExportError as exc:
            raise CommandError(str(exc)) from exc
        manifest_path, card_path = companion_paths(opts["out"])
        info = manifest["files"][opts["out"].name]
        self.stdout.write(
            f"{info['rows']} rows to {opts['out']} ({info['size']} bytes, sha256 "
            f"{info['sha256']}); manifest {manifest_path.name}, card {card_path.name}"
        )
        if manifest["conversions"]:
            self.stdout.write(json.dumps([c["description"] for c in manifest["conversions"]]))

    def hf_write(self, campaign, options, opts) -> None:
        """The dataset as a Hugging Face dataset folder at --out: the data file and its
        companions are written in a scratch folder, then split into --out."""
        with tempfile.TemporaryDirectory(prefix="proofmark-export-") as scratch:
            out = Path(scratch) / f"{campaign.slug}-{opts['format']}.{opts['file_type']}"
            folder = Path(scratch) / "hf"
            manifest = dataset_write(
                campaign=campaign,
                fmt=opts["format"],
                file_type=opts["file_type"],
                options=options,
                out=out,
                hf_folder=folder,
            )
            opts["out"].mkdir(parents=True, exist_ok=True)
            for item in folder.iterdir():
                shutil.move(str(item), opts["out"] / item.name)
        splits = ", ".join(f"{s} {i['rows']} rows" for s, i in manifest["hf"]["splits"].items())
        self.stdout.write(f"Hugging Face dataset folder {opts['out']}: {splits}")
