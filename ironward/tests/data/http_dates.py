#!/usr/bin/env python3
"""Writes http_dates.tsv: IMF-fixdate test vectors for ironward::http_retry::parse_http_date.

The oracle is Python's standard library, not ironward: `datetime` builds and validates the
dates (proleptic Gregorian calendar, month lengths, leap years, hour 0-23, minute and second
0-59) and `calendar.timegm` turns them into Unix seconds. Both handle every year from 1601 to
9999, the range RFC 9110 section 5.6.7 dates are read in here, so no date needs arithmetic of
our own. Written with Python 3.11; the output depends on nothing but this file.

Each line is tab-separated:

    valid    <IMF-fixdate>    <Unix seconds>
    invalid  <alteration>     <text>

Every valid date is followed by altered copies of itself that a strict IMF-fixdate parser must
reject: a wrong weekday, day 00 and 32, a day past the month's length, hour 24, minute 60,
second 60, a lower-case weekday or month, UTC for GMT, an extra space, and the RFC 850 and
asctime forms. The script checks each against its own strict reading before writing it, so a
copy that happened to be valid would stop it. (Alterations that need no calendar, such as
surrounding spaces or a comma-combined pair, are made by the Rust test itself.)

Run from this directory: python3 http_dates.py > http_dates.tsv
"""

import calendar
import datetime
import random
import re
import sys

FIRST_YEAR, LAST_YEAR = 1601, 9999
DAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
LONG_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
IMF = re.compile(r"([A-Z][a-z]{2}), (\d{2}) ([A-Z][a-z]{2}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT")


def imf(t: datetime.datetime) -> str:
    """The IMF-fixdate of t, built field by field (strftime would follow the locale)."""
    return (f"{DAYS[t.weekday()]}, {t.day:02} {MONTHS[t.month - 1]} {t.year:04} "
            f"{t.hour:02}:{t.minute:02}:{t.second:02} GMT")


def strict(text: str):
    """Unix seconds if text is a strict IMF-fixdate in 1601..=9999, else None."""
    m = IMF.fullmatch(text)
    if m is None or m.group(1) not in DAYS or m.group(3) not in MONTHS:
        return None
    day, year, hour, minute, second = (int(m.group(i)) for i in (2, 4, 5, 6, 7))
    if not FIRST_YEAR <= year <= LAST_YEAR:
        return None
    try:
        t = datetime.datetime(year, MONTHS.index(m.group(3)) + 1, day, hour, minute, second)
    except ValueError:
        return None
    if DAYS[t.weekday()] != m.group(1):
        return None
    return calendar.timegm(t.timetuple())


def replace_field(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def alterations(t: datetime.datetime):
    """(name, text) pairs: t's date made invalid in one way each."""
    text = imf(t)
    month_length = calendar.monthrange(t.year, t.month)[1]
    yield "weekday", DAYS[(t.weekday() + 1) % 7] + text[3:]
    yield "day-00", replace_field(text, 5, 7, "00")
    yield "day-32", replace_field(text, 5, 7, "32")
    # The first day past this month's end, with the weekday that day would have had if it
    # existed, so only the month length is wrong (29 Feb of a common year, 31 Apr, ...).
    past_end_weekday = (t.replace(day=month_length).weekday() + 1) % 7
    yield "month-length", f"{DAYS[past_end_weekday]}, {month_length + 1:02}" + text[7:]
    yield "hour-24", replace_field(text, 17, 19, "24")
    yield "minute-60", replace_field(text, 20, 22, "60")
    yield "second-60", replace_field(text, 23, 25, "60")
    yield "lowercase-weekday", text[:3].lower() + text[3:]
    yield "lowercase-month", replace_field(text, 8, 11, text[8:11].lower())
    yield "utc", text[:-3] + "UTC"
    yield "extra-space", text.replace(", ", ",  ", 1)
    yield "rfc850", (f"{LONG_DAYS[t.weekday()]}, {t.day:02}-{MONTHS[t.month - 1]}-"
                     f"{t.year % 100:02} {t.hour:02}:{t.minute:02}:{t.second:02} GMT")
    yield "asctime", (f"{DAYS[t.weekday()]} {MONTHS[t.month - 1]} {t.day:2} "
                      f"{t.hour:02}:{t.minute:02}:{t.second:02} {t.year:04}")


def dates():
    """The valid vectors, in order, without repeats."""
    rng = random.Random(3)  # issue 3; any fixed seed gives a reproducible file

    def at(y, mo, d, h=None, mi=None, s=None):
        return datetime.datetime(y, mo, d,
                                 rng.randrange(24) if h is None else h,
                                 rng.randrange(60) if mi is None else mi,
                                 rng.randrange(60) if s is None else s)

    # The edges of the range and of the Unix epoch, and RFC 9110's own example.
    yield at(1601, 1, 1, 0, 0, 0)
    yield at(9999, 12, 31, 23, 59, 59)
    yield at(1970, 1, 1, 0, 0, 0)
    yield at(1969, 12, 31, 23, 59, 59)
    yield at(1994, 11, 6, 8, 49, 37)
    yield at(2038, 1, 19, 3, 14, 7)
    yield at(2038, 1, 19, 3, 14, 8)
    # Leap days, and the last days of February in century years that are not leap years.
    for year in (1604, 2000, 2400, 9996):
        yield at(year, 2, 29)
        yield at(year, 2, 29, 23, 59, 59)
    for year in (1700, 1800, 1900, 2100):
        yield at(year, 2, 28)
        yield at(year, 3, 1, 0, 0, 0)
    # First and last day of every month in years across the range.
    for year in (1601, 1604, 1700, 1900, 1969, 1970, 2000, 2100, 2400, 9999):
        for month in range(1, 13):
            yield at(year, month, 1)
            yield at(year, month, calendar.monthrange(year, month)[1])
    # Uniform over the whole range in seconds, then one date in every second century.
    first = calendar.timegm((FIRST_YEAR, 1, 1, 0, 0, 0))
    last = calendar.timegm((LAST_YEAR, 12, 31, 23, 59, 59))
    for _ in range(30):
        yield datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=rng.randint(first, last))
    for century in range(1600, 10000, 200):
        yield at(max(century + rng.randrange(100), FIRST_YEAR), rng.randint(1, 12), rng.randint(1, 28))


def main():
    out = sys.stdout
    out.write("# IMF-fixdate vectors for ironward::http_retry, written by http_dates.py.\n")
    out.write("# The oracle is Python's datetime and calendar.timegm (years 1601..=9999).\n")
    out.write("# valid<TAB>date<TAB>unix seconds | invalid<TAB>alteration<TAB>text\n")
    seen = set()
    for t in dates():
        text = imf(t)
        if text in seen:
            continue
        seen.add(text)
        unix = calendar.timegm(t.timetuple())
        assert strict(text) == unix, text
        out.write(f"valid\t{text}\t{unix}\n")
        for name, altered in alterations(t):
            assert strict(altered) is None, (name, altered)
            assert "\t" not in altered and "\n" not in altered
            out.write(f"invalid\t{name}\t{altered}\n")


if __name__ == "__main__":
    main()
