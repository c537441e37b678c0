"""Scheme -> Markdown in ProofBench's three-section layout, which `parse_proofbench` reads back
to the same structure (ids are reassigned in the same order); a band scheme -> IMO-ProofBench's
guidelines, which `parse_imobench` reads back to the same bands."""

from __future__ import annotations

from decimal import Decimal

from .model import Chain, Checkpoint, DeductionKind, Partial, Rule, Scheme, format_points
from .text import split_title

ONE_CHAIN_RULE = (
    "**Score exactly one chain — take the maximum subtotal among chains; "
    "do not add points across chains.**"
)


def points_label(value: Decimal) -> str:
    return f"{format_points(value)} {'pt' if value == 1 else 'pts'}"


def scheme_to_markdown(scheme: Scheme) -> str:
    if scheme.bands:
        return _bands_text(scheme)
    out = ["## 1. Checkpoints (max 7 pts total)", ""]
    if len(scheme.chains) > 1:
        out += [ONE_CHAIN_RULE, ""]
    if scheme.round_down:
        out += ["**The final score is rounded down to an integer.**", ""]
    if scheme.shared:
        title = f": {scheme.shared.title}" if scheme.shared.title else ""
        out.append(
            f"**Shared prerequisites{title}** {_chain_tag(scheme.shared)} — "
            "count at most once regardless of chain."
        )
        out += _items(scheme.shared.items) + [""]
    several = len(scheme.chains) > 1
    for index, chain in enumerate(scheme.chains):
        if several or chain.title or chain.rule is Rule.MAX or scheme.shared:
            letter = _letter(index)
            title = f": {chain.title}" if chain.title else ""
            out.append(f"**Chain {letter}{title}** {_chain_tag(chain)}")
        out += _items(chain.items) + [""]
    out += [_total_line(scheme), ""]
    if scheme.zero_credit:
        out += ["## 2. Zero-credit items"]
        out += [f"- {item.text}" for item in scheme.zero_credit] + [""]
    if scheme.deductions:
        out += ["## 3. Deductions"]
        for deduction in scheme.deductions:
            if deduction.kind is DeductionKind.CAP:
                label = f"Cap at {format_points(deduction.value)}/7"
            else:
                label = f"-{points_label(deduction.value)}"
            text = f" {deduction.text}" if deduction.text else ""
            out.append(f"- **{label}:**{text}")
        out.append("")
        out.append("Apply at most the single largest deduction; never reduce the score below 0.")
        out.append("")
    if scheme.notes.strip():
        out += ["## Notes", scheme.notes.strip(), ""]
    if scheme.guidelines.strip():
        out += ["## Guidelines", scheme.guidelines.strip(), ""]
    return "\n".join(out).rstrip() + "\n"


def _letter(index: int) -> str:
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[index % 26]


def _chain_tag(chain: Chain) -> str:
    if chain.rule is Rule.MAX and chain.cap is not None:
        return f"[max {format_points(chain.cap)}]"
    return "[additive]"


def _items(items: list[Checkpoint], depth: int = 0) -> list[str]:
    lines = []
    for cp in items:
        parts = [f"({points_label(cp.points)})"]
        if cp.title and (cp.description or split_title(cp.title) != (cp.title, "")):
            parts.append(f"**{cp.title.replace('**', '')}**")
            if cp.description:
                parts.append(f"— {cp.description}")
        elif cp.title or cp.description:
            parts.append(cp.title or cp.description)
        if cp.approachability is not None:
            parts.append(f"[approachability {cp.approachability}]")
        parts.append(_item_tag(cp))
        lines.append("  " * depth + "- " + " ".join(parts))
        lines += _items(cp.children, depth + 1)
    return lines


def _item_tag(cp: Checkpoint) -> str:
    if cp.children:
        if cp.rule is Rule.LARGER:
            return "(award the larger only)"
        if cp.rule is Rule.MAX and cp.cap is not None:
            return f"[max {format_points(cp.cap)}]"
        return "[additive]"
    if cp.partial is Partial.NONE:
        return "[additive] [all or nothing]"
    if cp.partial is Partial.HALF:
        return "[additive] [half-point partial credit]"
    return "[additive]"


def _total_line(scheme: Scheme) -> str:
    shared = scheme.shared.max_value() if scheme.shared else None
    parts = []
    for index, chain in enumerate(scheme.chains):
        terms = [format_points(item.max_value()) for item in chain.items]
        if shared is not None:
            terms.insert(0, format_points(shared))
        total = chain.max_value() + (shared or Decimal(0))
        name = f"Chain {_letter(index)}: " if len(scheme.chains) > 1 else ""
        parts.append(f"{name}{' + '.join(terms) or '0'} = {format_points(total)}")
    return f"**Total (max 7):** {'; '.join(parts)}."


def _bands_text(scheme: Scheme) -> str:
    """The bands' lines under "(Incorrect)", "(Partial)", "(Almost)", "(Correct)" headers; a
    line of a band split off by its own points states them."""
    out = [scheme.notes.strip()] if scheme.notes.strip() else []
    for name in ("Incorrect", "Partial", "Almost", "Correct"):
        bands = [band for band in scheme.bands if band.name == name and band.lines]
        if not bands:
            continue
        out.append(f"({name})")
        number = 0
        for band in reversed(bands):
            own = f" ({points_label(band.points)})" if band.id != name.lower() else ""
            for line in band.lines:
                number += 1
                out.append(f" {number}. {line}{own}")
    return "\n".join(out) + "\n"
