"""An export as a Hugging Face dataset repository: a folder that `datasets.load_dataset(folder)`
reads and `huggingface-cli upload` pushes as it is.

    README.md                          the dataset card, under a YAML header (configs with the
                                       data files of each split, the features and their types,
                                       licence, pretty name, task categories)
    data/train-00000-of-00001.parquet  the rows of each split (or .jsonl), one file a split
    data/test-00000-of-00001.parquet
    manifest.json                      the export's manifest (counts, filters, checksums)
    checkpoints.csv                    the checkpoint figures, where the grades used a scheme
    pictures/                          the pictures the texts refer to, when there are any

Written from the export's data file once it is complete: the rows are read back and routed by
their `split` column (all to `train` when the export has no split). `json` columns are JSON
text in both file types here (the features then hold one type per column, which the Hub's
viewer and `datasets` need); `struct` columns stay nested.
"""

from __future__ import annotations

import contextlib
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import orjson

from exports.formats.base import ExportError
from exports.writers import Field, atomic_path, file_sha256, manifest_bytes, write_text_atomic

HF_FILE_TYPES = ("parquet", "jsonl")
DATA_FOLDER = "data"
CHECKPOINTS = "checkpoints.csv"
SPLITS_ORDER = ("train", "test")
# the Hub's identifiers of the licences a source record may name (lower case there)
HUB_LICENCES = {
    "cc-by-4.0",
    "cc-by-sa-4.0",
    "cc-by-nc-4.0",
    "cc-by-nc-sa-4.0",
    "cc0-1.0",
    "mit",
    "apache-2.0",
    "bsd-3-clause",
    "odc-by",
    "odbl",
}
# what each format's rows are for, in the Hub's task categories
TASK_CATEGORIES = {
    "proofbench": ["text-classification"],
    "dv": ["text-classification"],
    "dmv": ["text-classification"],
    "annotations": ["text-classification"],
    "judgements": ["text-classification"],
    "pairs": ["text-classification"],
}
_DTYPES = {"string": "string", "int": "int64", "float": "float64", "bool": "bool", "json": "string"}


def hub_feature(field: Field) -> dict:
    """A column as the card's `dataset_info.features` names it (`datasets.Features` in YAML)."""
    if field.kind == "struct":
        return {"name": field.name, "struct": [hub_feature(c) for c in field.children]}
    return {"name": field.name, "dtype": _DTYPES[field.kind]}


def hub_licence(licences: list[str]) -> str:
    """The card's `license`: the one licence of the source records in the Hub's spelling;
    `other` for several (the card lists them), `unknown` when none was recorded."""
    if not licences:
        return "unknown"
    if len(licences) == 1 and licences[0].lower() in HUB_LICENCES:
        return licences[0].lower()
    return "other"


def size_category(rows: int) -> str:
    """The Hub's size category of a dataset of `rows` rows (n<1K, 1K<n<10K, ...)."""
    bounds = [(1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")]
    bounds += [(1_000_000, "100K<n<1M"), (10_000_000, "1M<n<10M"), (100_000_000, "10M<n<100M")]
    return next((name for bound, name in bounds if rows < bound), "100M<n<1B")


def split_file_name(split: str, file_type: str) -> str:
    return f"{DATA_FOLDER}/{split}-00000-of-00001.{file_type}"


def _split_parquet(data: Path, folder: Path) -> dict[str, int]:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    source = pq.ParquetFile(data)
    schema = source.schema_arrow
    has_split = "split" in schema.names
    counts: dict[str, int] = {}
    # each split's file is renamed to its name only once its writer has closed (the stack
    # unwinds in reverse); an error leaves none of them
    with contextlib.ExitStack() as stack:
        writers = {}
        for batch in source.iter_batches(batch_size=5000):
            table = pa.Table.from_batches([batch], schema=schema)
            if has_split:
                names = [s for s in pc.unique(table["split"]).to_pylist() if s is not None]
                parts = {s: table.filter(pc.equal(table["split"], s)) for s in names}
            else:
                parts = {"train": table}
            for split, part in parts.items():
                if split not in writers:
                    temp = stack.enter_context(
                        atomic_path(folder / split_file_name(split, "parquet"))
                    )
                    writers[split] = stack.enter_context(
                        pq.ParquetWriter(temp, schema, compression="snappy")
                    )
                writers[split].write_table(part)
                counts[split] = counts.get(split, 0) + part.num_rows
    return counts


def _split_jsonl(data: Path, fields: list[Field], folder: Path) -> dict[str, int]:
    as_text = [f.name for f in fields if f.kind == "json"]
    option = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS
    counts: dict[str, int] = {}
    with contextlib.ExitStack() as stack:
        handles = {}
        source = stack.enter_context(data.open("rb"))
        for line in source:
            row = orjson.loads(line)
            for name in as_text:
                if row.get(name) is not None:
                    row[name] = orjson.dumps(row[name], option=orjson.OPT_NON_STR_KEYS).decode()
            split = row.get("split") or "train"
            if split not in handles:
                temp = stack.enter_context(atomic_path(folder / split_file_name(split, "jsonl")))
                handles[split] = stack.enter_context(temp.open("wb"))
            handles[split].write(orjson.dumps(row, option=option))
            counts[split] = counts.get(split, 0) + 1
    return counts


def hub_card_header(
    *, pretty_name: str, fmt: str, fields: list[Field], splits: dict, licences: list[str]
) -> str:
    """The card's YAML header, as the Hub and `datasets` read it."""
    ordered = sorted(splits, key=lambda s: (SPLITS_ORDER + (s,)).index(s))
    header = {
        "pretty_name": pretty_name,
        "license": hub_licence(licences),
        "language": ["en"],
        "task_categories": TASK_CATEGORIES.get(fmt, ["text-classification"]),
        "size_categories": [size_category(sum(splits.values()))],
        "tags": ["mathematics", "proofs", "proof-grading", "proofmark"],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": s, "path": f"{DATA_FOLDER}/{s}-*"} for s in ordered],
            }
        ],
        "dataset_info": {"features": [hub_feature(f) for f in fields]},
    }
    import yaml  # only a Hugging Face folder has a YAML header: 11 ms off every other export's start

    text = yaml.safe_dump(header, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{text}---\n"


def hub_folder_write(
    *,
    data: Path,
    file_type: str,
    fields: list[Field],
    manifest: dict,
    render_card: Callable[[dict], str],
    title: str,
    folder: Path,
) -> dict:
    """Writes the export whose data file is `data` (with its manifest) as a Hugging Face dataset
    folder at `folder`, its card made by `render_card` from the folder's own manifest (the
    export's, its files the folder's); returns what the manifest says of the folder (`layout`,
    `splits` with each split's file, rows and checksum)."""
    if file_type not in HF_FILE_TYPES:
        raise ExportError(f"layout hf: file type {' or '.join(HF_FILE_TYPES)}, not {file_type}")
    if not manifest["counts"]["rows"]:
        # `datasets` refuses a split with no row ("corresponds to no data"): a folder it could
        # not load is not written
        raise ExportError("layout hf: no row matches the filters, and a dataset needs one")
    folder.mkdir(parents=True, exist_ok=True)
    if file_type == "parquet":
        counts = _split_parquet(data, folder)
    else:
        counts = _split_jsonl(data, fields, folder)
    splits = {}
    for split in sorted(counts, key=lambda s: (SPLITS_ORDER + (s,)).index(s)):
        path = folder / split_file_name(split, file_type)
        splits[split] = {
            "file": split_file_name(split, file_type),
            "rows": counts[split],
            "size": path.stat().st_size,
            "sha256": file_sha256(path),
        }
    files = {
        info["file"]: {k: info[k] for k in ("rows", "size", "sha256")} for info in splits.values()
    }
    own = dict(manifest)
    if manifest.get("checkpoints"):
        checkpoints = manifest["checkpoints"]
        shutil.copyfile(data.parent / checkpoints["file"], folder / CHECKPOINTS)
        own["checkpoints"] = {**checkpoints, "file": CHECKPOINTS}
        files[CHECKPOINTS] = {k: checkpoints[k] for k in ("rows", "size", "sha256")}
    pictures = data.parent / "pictures"
    if pictures.is_dir():
        shutil.copytree(pictures, folder / "pictures", dirs_exist_ok=True)
        files.update({k: v for k, v in manifest["files"].items() if k.startswith("pictures/")})
    layout = {"layout": "hf", "splits": splits}
    own["files"] = files
    own["hf"] = layout
    header = hub_card_header(
        pretty_name=title,
        fmt=manifest.get("format", ""),
        fields=fields,
        splits=counts,
        licences=manifest.get("licences") or [],
    )
    lines = ["\n## This folder\n\nA Hugging Face dataset repository: `datasets.load_dataset` "]
    lines.append("reads it as it is, `huggingface-cli upload` pushes it.\n\n")
    for split, info in splits.items():
        lines.append(
            f"- `{info['file']}`: split `{split}`, {info['rows']} rows, sha256 `{info['sha256']}`\n"
        )
    lines.append(
        "- `manifest.json`: the export's manifest (its `files` this folder's).\n"
        "\n`json` columns hold JSON text here (one type a column); `struct` columns are nested.\n"
    )
    card = render_card(own)
    write_text_atomic(folder / "README.md", header + "\n" + card + "".join(lines))
    write_text_atomic(folder / "manifest.json", manifest_bytes(own).decode())
    return layout


def hub_folder_zip(folder: Path, target: Path) -> Path:
    """The folder in one .zip (its files at the top of the archive): the download part `hf`."""
    with atomic_path(target) as temp, zipfile.ZipFile(temp, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in sorted(p for p in folder.rglob("*") if p.is_file()):
            archive.write(file, file.relative_to(folder).as_posix())
    return target
