"""The HTML report's progress chart: settled quests over time, as inline SVG.

Drawn from the dates the ratchet file records: a PASS quest's ``passed_at``,
and for a quest settled otherwise (REVIEW, DONE, EXCLUDED) the date of the
last event of its history.  Pure: the ratchet in, SVG text out; every string
in the SVG is escaped.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from html import escape

from pytest_quest.core.model import Quest, Ratchet, State


@dataclass(frozen=True)
class Point:
    """After the quests settled at `at`: how many are PASS, and how many are settled at all."""

    at: datetime
    passed: int
    settled: int


def parse_time(text: str) -> datetime | None:
    """An ISO 8601 time of the ratchet file (``2026-11-30T06:55:01Z``) in UTC; None if not one."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc)


def settled_at(quest: Quest) -> datetime | None:
    """When `quest` reached its current terminal state; None for TODO or no readable date."""
    if quest.state is State.TODO:
        return None
    if quest.state is State.PASS:
        return parse_time(quest.passed_at)
    return parse_time(quest.history[-1].at) if quest.history else None


def progress(ratchet: Ratchet) -> tuple[list[Point], int]:
    """One point per distinct settling time, in order; and how many settled quests have no date."""
    dated: list[tuple[datetime, bool]] = []
    undated = 0
    for quest in ratchet.quests.values():
        if quest.state is State.TODO:
            continue
        moment = settled_at(quest)
        if moment is None:
            undated += 1
        else:
            dated.append((moment, quest.state is State.PASS))
    points: list[Point] = []
    passed = 0
    for settled, (moment, is_pass) in enumerate(sorted(dated, key=lambda item: item[0]), 1):
        passed += is_pass
        if points and points[-1].at == moment:
            points[-1] = Point(moment, passed, settled)
        else:
            points.append(Point(moment, passed, settled))
    return points, undated


WIDTH, HEIGHT = 720, 260
LEFT, RIGHT, TOP, BOTTOM = 56, 16, 28, 40


def _label(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M")


def _steps(
    points: list[Point], value: str, x: dict[datetime, float], y: float, scale: float
) -> str:
    """A step line through `points`' `value` (``passed`` or ``settled``), flat to the right edge."""
    coords: list[tuple[float, float]] = []
    level = 0
    for point in points:
        left = x[point.at]
        coords.append((left, y - level * scale))
        level = getattr(point, value)
        coords.append((left, y - level * scale))
    coords.append((WIDTH - RIGHT, y - level * scale))
    return " ".join(f"{cx:.1f},{cy:.1f}" for cx, cy in coords)


def svg(points: list[Point], total: int) -> str:
    """The chart: PASS and settled quests (step lines) against all `total` quests (dashed)."""
    title = "Settled quests over time"
    head = (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" '
        f'aria-labelledby="chart-title"><title id="chart-title">{escape(title)}</title>'
    )
    if not points or total <= 0:
        return (
            head + f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT / 2:.0f}" text-anchor="middle">'
            "no settled quest with a recorded date yet</text></svg>"
        )
    bottom = HEIGHT - BOTTOM
    scale = (bottom - TOP) / total
    first, last = points[0].at, points[-1].at
    span = (last - first).total_seconds()
    plot = WIDTH - RIGHT - LEFT
    # One moment only: the step sits at the left edge and runs flat to the right.
    x = {
        p.at: LEFT + (plot * 0.9 * (p.at - first).total_seconds() / span if span else 0.0)
        for p in points
    }
    top_y = bottom - total * scale
    parts = [
        head,
        f'<line class="axis" x1="{LEFT}" y1="{bottom}" x2="{WIDTH - RIGHT}" y2="{bottom}"/>',
        f'<line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{bottom}"/>',
        f'<line class="total" x1="{LEFT}" y1="{top_y:.1f}" x2="{WIDTH - RIGHT}" '
        f'y2="{top_y:.1f}" stroke-dasharray="6 4"/>',
        f'<text class="tick" x="{LEFT - 6}" y="{bottom}" text-anchor="end">0</text>',
        f'<text class="tick" x="{LEFT - 6}" y="{top_y + 4:.1f}" text-anchor="end">{total}</text>',
        f'<polyline class="settled" fill="none" points="{_steps(points, "settled", x, bottom, scale)}"/>',
        f'<polyline class="passed" fill="none" points="{_steps(points, "passed", x, bottom, scale)}"/>',
        f'<text class="tick" x="{LEFT}" y="{bottom + 18}">{escape(_label(first))}</text>',
    ]
    if span:
        parts.append(
            f'<text class="tick" x="{x[last]:.1f}" y="{bottom + 18}" text-anchor="end">'
            f"{escape(_label(last))}</text>"
        )
    final = points[-1]
    parts.append(
        f'<text class="legend" x="{LEFT + 8}" y="{TOP - 10}">'
        f'<tspan class="passed">PASS {final.passed}</tspan> · '
        f'<tspan class="settled">settled {final.settled}</tspan> · '
        f'<tspan class="total">all quests {total}</tspan></text>'
    )
    parts.append("</svg>")
    return "".join(parts)
