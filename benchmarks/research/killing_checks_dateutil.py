r"""Killing checks for surviving python-dateutil mutants (the false FAILs of 2026-12-gate-research.md).

    python benchmarks/research/killing_checks_dateutil.py /path/to/python-dateutil-4.0.0

As benchmarks/research/killing_checks.py does for boltons: each check is a plain
test of the function's behaviour, run on the original module and on a copy
with one planned mutant (by its id) applied; a different result means the
mutant is killable.  These are the survivors of dateutil 4.0.0's baseline
(session 28) that are not plainly killable by reading them; the checks that
give the same result on both are the false FAILs (2026-12-gate-research.md says why).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from killing_checks import module_with_mutant


def mutant_module(root: Path, module: str, quest_id: str, mutant_id: str) -> Any:
    """A fresh copy of `module` with the mutant `mutant_id` of `quest_id` applied."""
    return module_with_mutant(root, module, quest_id, lambda m: m.id == mutant_id, mutant_id)


def swapped_run(
    check: Callable[[Any], Any], host: Any, mutated: Any, module: Any, qualname: str
) -> Any:
    """`check(host)` with the function `qualname` of `module` running the mutant's code (as the
    mutation child swaps it): for functions reached only through another module."""
    names = qualname.split(".")
    function = module
    for name in names:
        function = getattr(function, name)
    twin = mutated
    for name in names:
        twin = getattr(twin, name)
    saved = function.__code__
    function.__code__ = twin.__code__
    try:
        return check(host)
    finally:
        function.__code__ = saved


def outcome(call: Callable[[], Any]) -> Any:
    """The call's result, or the type and text of what it raised."""
    try:
        return call()
    except Exception as exc:
        return (type(exc).__name__, str(exc))


def century_near_the_year_10000(m: Any) -> Any:
    freeze_time = importlib.import_module("freezegun").freeze_time

    with freeze_time("9960-06-01"):
        return m.parserinfo().convertyear(5)


def parse_two_digit_year_at_a_frozen_clock(m: Any) -> Any:
    freeze_time = importlib.import_module("freezegun").freeze_time

    with freeze_time("2200-01-01"):
        return m.parse("1/1/50")


def float_offset_in_tzinfos(m: Any) -> Any:
    return outcome(lambda: m.parser()._build_tzinfo({"X": 3600.0}, "X", None))


def directory_key_exception_context(m: Any) -> Any:
    try:
        m._load_tzdata("Europe")
    except Exception as exc:
        return type(exc).__name__, str(exc), type(exc.__context__).__name__
    return None


def directory_key(m: Any) -> Any:
    return outcome(lambda: m._load_tzdata("Europe"))


def iterate_a_complete_cache(m: Any) -> Any:
    import datetime

    rr = m.rrule(m.DAILY, count=3, cache=True, dtstart=datetime.datetime(2026, 1, 1))
    first = list(rr)
    return first, list(rr), rr[1], rr.count(), list(rr.between(first[0], first[2], inc=True))


def reduce_ex_state(m: Any) -> Any:
    import datetime

    rr = m.rrule(m.DAILY, count=3, cache=True, dtstart=datetime.datetime(2026, 1, 1))
    list(rr)
    rv = rr.__reduce_ex__(2)  # (a pickle round trip resets the cache either way)
    return len(rv), rv[2].get("_cache")


def weekday_names(m: Any) -> Any:
    import datetime

    default = datetime.datetime(2026, 12, 2)  # a Wednesday
    return [
        m.parse(text, default=default) for text in ("Mon", "Wed", "Sun", "Mon 10:00", "Sep Fri")
    ]


def default_day_past_the_month(m: Any) -> Any:
    import datetime

    default = datetime.datetime(2026, 1, 31)
    return [m.parse(text, default=default) for text in ("Feb", "Feb 2024", "Apr 10:00", "2026-02")]


def month_too_short(m: Any) -> Any:
    return [outcome(partial(m.isoparser()._parse_isodate_common, s)) for s in (b"20031", b"2003-1")]


def time_starting_with_an_offset(m: Any) -> Any:
    return [outcome(partial(m.isoparser()._parse_isotime, s)) for s in (b"+05", b"Z0", b"-0530")]


def replace_keeps_byweekday(m: Any) -> Any:
    import datetime

    rr = m.rrule(m.WEEKLY, byweekday=(m.MO, m.FR), count=4, dtstart=datetime.datetime(2026, 12, 1))
    return list(rr.replace(count=3))


def rdates_added_out_of_order(m: Any) -> Any:
    import datetime

    rs = m.rruleset()
    for day in (5, 1, 3):
        rs.rdate(datetime.datetime(2026, 12, day))
    return list(rs)


def hour_and_minute_times(m: Any) -> Any:
    import datetime

    rr = m.rrule(
        m.HOURLY,
        byminute=(50, 10),
        bysecond=(30, 0),
        count=5,
        dtstart=datetime.datetime(2026, 12, 1),
    )
    info = m._iterinfo(rr)
    return list(rr), info.htimeset(1, 0, 0), info.mtimeset(1, 10, 0)


def wkst_in_a_string(m: Any) -> Any:
    rule = "DTSTART:20261201T000000\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU"
    return list(m.rrulestr(rule))


def fold_outside_an_ambiguous_hour(m: Any) -> Any:
    import datetime

    est = m.tzstr("EST5EDT")  # a _tzinfo: its _fold_status as _tzinfo.fromutc calls it
    utc = datetime.datetime(2026, 1, 15, 12, tzinfo=est)
    wall = datetime.datetime(2026, 1, 15, 7, tzinfo=est)
    return est._fold_status(utc, wall)


def offset_subclass(m: Any) -> Any:
    class Sub(m.tzoffset):  # type: ignore[misc]  # the library's class, loaded at run time
        pass

    m.tzoffset("X", 3600)
    return type(Sub("X", 3600)).__name__


def str_subclass(m: Any) -> Any:
    class Sub(m.tzstr):  # type: ignore[misc]  # the library's class, loaded at run time
        pass

    m.tzstr("EST5EDT")
    return type(Sub("EST5EDT")).__name__


def tzname_already_right(m: Any) -> Any:
    import datetime

    est = m.tz.tzstr("EST5EDT")
    winter = datetime.datetime(2026, 1, 15, 7, tzinfo=est)
    summer = datetime.datetime(2026, 7, 15, 7, tzinfo=est)
    p = m.parser()
    return [
        (d.tzname(), d.fold)
        for d in (p._assign_tzname(winter, "EST"), p._assign_tzname(summer, "EST"))
    ]


def minutes_with_a_fraction(m: Any) -> Any:
    return [m.parser()._parse_min_sec(v) for v in (36.5, 36.99)]


def decimal_infinity(m: Any) -> Any:
    return outcome(lambda: m.parser()._to_decimal("inf"))


def not_found_message(m: Any) -> Any:
    exc = m.TZFileNotFound("Time zone not found: %s", zone_key="Nowhere")
    return str(exc), getattr(exc, "zone_key", None)


def validate_z(m: Any) -> Any:
    res = m.parser._result()
    res.tzname, res.tzoffset = "Z", None
    m.parserinfo().validate(res)
    return res.tzname, res.tzoffset


def day_fifteen(m: Any) -> Any:
    ymd = m._ymd()
    ymd.append(2026, "Y")
    ymd.append(2, "M")
    return ymd.could_be_day(15), ymd.could_be_day(30)


def ampm_not_fuzzy(m: Any) -> Any:
    return m.parser()._ampm_valid(10, 0, False)


def isoparse_a_stream(m: Any) -> Any:
    import io

    return outcome(lambda: m.isoparse(io.StringIO("2026-12-02T10:00")))


def isoparser_letter_sep(m: Any) -> Any:
    return outcome(lambda: m.isoparser(sep="X").isoparse("2026-12-02X10:00"))


def thirteen_months(m: Any) -> Any:
    rd = m.relativedelta()
    rd._set_months(13)  # as relativedelta(dt1, dt2) sets it
    return rd.years, rd.months


def relativedelta_arithmetic(m: Any) -> Any:
    a, b = m.relativedelta(years=2, seconds=5), m.relativedelta(years=1, seconds=1)
    return (
        repr(a + b),
        repr(a - b),
        repr(-a),
        m.relativedelta(weekday=m.MO) == m.relativedelta(weekday=m.MO(+1)),
    )


def tzlocal_under_two_rules(m: Any) -> Any:
    import os
    import time

    saved = os.environ.get("TZ")
    made = []
    try:
        for rule in ("EST5EDT4", "EST5EDT3"):  # the same standard offset, DST one hour apart
            os.environ["TZ"] = rule
            time.tzset()
            made.append(m.tzlocal())
    finally:
        if saved is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = saved
        time.tzset()
    return made[0] == made[1]


def tzrange_without_a_dst_offset(m: Any) -> Any:
    import datetime

    summer = datetime.datetime(2026, 7, 1, 12)
    return (
        m.tzrange("EST", -18000) == m.tzrange("EST", -18000, dstoffset=0),
        m.tzrange("XST", None, "XDT").utcoffset(summer),
    )


def a_fresh_gettz(m: Any) -> Any:
    return outcome(lambda: repr(type(m.gettz)()("UTC")))


def tzpath_unknown_attribute(m: Any) -> Any:
    return outcome(lambda: m.no_such_name)


def legacy_gettz_first_call(m: Any) -> Any:
    import warnings

    m._CLASS_ZONE_INSTANCE.clear()  # as in a fresh process (a module copy starts so)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return outcome(lambda: (repr(m.gettz("America/New_York")), repr(m.gettz("UTC"))))


def ambiguous_without_is_ambiguous(m: Any) -> Any:
    import datetime
    import zoneinfo

    ny = zoneinfo.ZoneInfo("America/New_York")
    return [m.datetime_ambiguous(datetime.datetime(2026, 11, 1, h, 30), ny) for h in (0, 1, 2)] + [
        m.datetime_ambiguous(datetime.datetime(2026, 11, 1, 1, 30), m.gettz("America/New_York"))
    ]


DU = "src/dateutil/"


# (check, module mutated, quest, mutant id[, module the check is given: the function's code swapped])
def transition_time_with_minutes(m: Any) -> Any:
    return [m._parse_transition_time(t) for t in ("-1:30", "-1:30:15", "+2:05:09")]


def one_offset_local_transitions(m: Any) -> Any:
    # One offset: trans_idx holds only 0, so offset_1 is offset_0 on both paths.
    return m.tzfile._ts_to_local([0, 0], [100, 200], [7200])


CHECKS: list[tuple[Any, ...]] = [
    (
        transition_time_with_minutes,
        "dateutil.tz._tzfile",
        DU + "tz/_tzfile.py::_parse_transition_time",
        "mbe10b111",
    ),
    (
        transition_time_with_minutes,
        "dateutil.tz._tzfile",
        DU + "tz/_tzfile.py::_parse_transition_time",
        "m27f7633a",
    ),
    (
        one_offset_local_transitions,
        "dateutil.tz._tzfile",
        DU + "tz/_tzfile.py::tzfile._ts_to_local",
        "mbfe2cbb4",
    ),
    (
        not_found_message,
        "dateutil._tzdata_impl",
        DU + "_tzdata_impl.py::TZFileNotFound.__init__",
        "mf0552d49",
    ),
    (
        validate_z,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parserinfo.validate",
        "mba780115",
    ),
    (
        day_fifteen,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::_ymd.could_be_day",
        "mdfd32dcc",
    ),
    (
        ampm_not_fuzzy,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._ampm_valid",
        "m3f06acb6",
    ),
    (
        isoparse_a_stream,
        "dateutil.parser.isoparser",
        DU + "parser/isoparser.py::_takes_ascii.func",
        "m419ca9ec",
    ),
    (
        isoparser_letter_sep,
        "dateutil.parser.isoparser",
        DU + "parser/isoparser.py::isoparser.__init__",
        "m405967a6",
    ),
    (
        isoparser_letter_sep,
        "dateutil.parser.isoparser",
        DU + "parser/isoparser.py::isoparser.isoparse",
        "md8ad8a07",
    ),
    (
        thirteen_months,
        "dateutil.relativedelta",
        DU + "relativedelta.py::relativedelta._set_months",
        "mbfc2d700",
    ),
    (
        relativedelta_arithmetic,
        "dateutil.relativedelta",
        DU + "relativedelta.py::relativedelta.__add__",
        "m52f39671",
    ),
    (
        relativedelta_arithmetic,
        "dateutil.relativedelta",
        DU + "relativedelta.py::relativedelta.__sub__",
        "m890c0ce1",
    ),
    (
        relativedelta_arithmetic,
        "dateutil.relativedelta",
        DU + "relativedelta.py::relativedelta.__neg__",
        "m47ceb09a",
    ),
    (
        relativedelta_arithmetic,
        "dateutil.relativedelta",
        DU + "relativedelta.py::relativedelta.__eq__",
        "m0688e6f0",
    ),
    (
        century_near_the_year_10000,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parserinfo.__init__",
        "m349f06de",
    ),
    (
        parse_two_digit_year_at_a_frozen_clock,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parse",
        "m573681db",
    ),
    (
        float_offset_in_tzinfos,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._build_tzinfo",
        "mda64420f",
    ),
    (directory_key, "dateutil._tzdata_impl", DU + "_tzdata_impl.py::_load_tzdata", "m285ac82a"),
    (
        directory_key_exception_context,
        "dateutil._tzdata_impl",
        DU + "_tzdata_impl.py::_load_tzdata",
        "m285ac82a",
    ),
    (
        weekday_names,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._build_naive",
        "m9f0dd432",
    ),
    (
        default_day_past_the_month,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._build_naive",
        "m3f802b10",
    ),
    (
        tzname_already_right,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._assign_tzname",
        "mcbb55ce7",
    ),
    (
        tzname_already_right,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._assign_tzname",
        "m7d3465e2",
    ),
    (
        minutes_with_a_fraction,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._parse_min_sec",
        "ma46d163e",
    ),
    (
        decimal_infinity,
        "dateutil.parser._parser",
        DU + "parser/_parser.py::parser._to_decimal",
        "mc6d68761",
    ),
    (
        month_too_short,
        "dateutil.parser.isoparser",
        DU + "parser/isoparser.py::isoparser._parse_isodate_common",
        "ma568cbab",
    ),
    (
        time_starting_with_an_offset,
        "dateutil.parser.isoparser",
        DU + "parser/isoparser.py::isoparser._parse_isotime",
        "m8aab58c8",
    ),
    (replace_keeps_byweekday, "dateutil.rrule", DU + "rrule.py::rrule.replace", "m4f2d9ab9"),
    (rdates_added_out_of_order, "dateutil.rrule", DU + "rrule.py::rruleset._iter", "m429ac212"),
    (hour_and_minute_times, "dateutil.rrule", DU + "rrule.py::_iterinfo.htimeset", "m2b8a00d1"),
    (hour_and_minute_times, "dateutil.rrule", DU + "rrule.py::_iterinfo.mtimeset", "m5693d896"),
    (wkst_in_a_string, "dateutil.rrule", DU + "rrule.py::_rrulestr._handle_WKST", "mce889e5b"),
    (
        fold_outside_an_ambiguous_hour,
        "dateutil.tz._common",
        DU + "tz/_common.py::_tzinfo._fold_status",
        "m473ac7c8",
        "dateutil.tz",
    ),
    (
        fold_outside_an_ambiguous_hour,
        "dateutil.tz._common",
        DU + "tz/_common.py::_tzinfo._fold_status",
        "mf035dca7",
        "dateutil.tz",
    ),
    (
        offset_subclass,
        "dateutil.tz._factories",
        DU + "tz/_factories.py::_TzOffsetFactory.__init__",
        "m94b44968",
        "dateutil.tz",
    ),
    (
        str_subclass,
        "dateutil.tz._factories",
        DU + "tz/_factories.py::_TzStrFactory.__init__",
        "m94b44968",
        "dateutil.tz",
    ),
    (
        tzpath_unknown_attribute,
        "dateutil.tz._tzpath",
        DU + "tz/_tzpath.py::__getattr__",
        "m08fd5782",
    ),
    (tzlocal_under_two_rules, "dateutil.tz.tz", DU + "tz/tz.py::tzlocal.__eq__", "m85fab769"),
    (
        tzrange_without_a_dst_offset,
        "dateutil.tz.tz",
        DU + "tz/tz.py::tzrange.__init__",
        "mc7387668",
    ),
    (a_fresh_gettz, "dateutil.tz.tz", DU + "tz/tz.py::__get_gettz.GettzFunc.__init__", "m4cbba803"),
    (legacy_gettz_first_call, "dateutil.zoneinfo", DU + "zoneinfo/__init__.py::gettz", "m13275ed9"),
    (legacy_gettz_first_call, "dateutil.zoneinfo", DU + "zoneinfo/__init__.py::gettz", "m603c77a8"),
    (legacy_gettz_first_call, "dateutil.zoneinfo", DU + "zoneinfo/__init__.py::gettz", "m18531482"),
    (
        ambiguous_without_is_ambiguous,
        "dateutil.tz.tz",
        DU + "tz/tz.py::datetime_ambiguous",
        "m594f4190",
    ),
    (iterate_a_complete_cache, "dateutil.rrule", DU + "rrule.py::rrulebase.__iter__", "m18c54f82"),
    (reduce_ex_state, "dateutil.rrule", DU + "rrule.py::rrulebase.__reduce_ex__", "m63f5b81e"),
    (reduce_ex_state, "dateutil.rrule", DU + "rrule.py::rrulebase.__reduce_ex__", "m77fc8edd"),
]


def main() -> None:
    root = Path(sys.argv[1]).resolve()
    sys.path.insert(0, str(root / "src"))
    for check, module, quest_id, mutant, *host in CHECKS:
        original = importlib.import_module(module)
        mutated = mutant_module(root, module, quest_id, mutant)
        if host:
            given = importlib.import_module(host[0])
            before = check(given)
            after = swapped_run(check, given, mutated, original, quest_id.split("::")[1])
        else:
            before = check(original)
            after = check(mutated)
        verdict = "KILLED" if before != after else "survives"
        print(
            f"{quest_id} {mutant}: {check.__name__} gives {before!r}, the mutant {after!r}: {verdict}"
        )


if __name__ == "__main__":
    main()
