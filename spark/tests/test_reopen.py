"""A reopened date's kept window in the driver's planning, without Spark: an upload's rows of the
date inside the wider window make it affected, not beyond, as the lab's affected_dates."""

from __future__ import annotations

import datetime as dt
import unittest
from collections import namedtuple

from recount_spark.v2 import affected_and_beyond

Cell = namedtuple("Cell", "business_date currency rows revenue_minor affected beyond current window_days")

D = dt.date(2026, 10, 20)
U = dt.date(2026, 10, 23)  # three days after D: past the default 2-day window


class KeptWindows(unittest.TestCase):
    def cells(self) -> dict[dt.date, list[Cell]]:
        # window_days as the SQL gives it: the days from the business date to the upload.
        return {U: [Cell(D, "GBP", 14, 225382, False, True, True, 3), Cell(U, "GBP", 900, 9_000_000, True, False, True, 0)]}

    def test_without_a_kept_window_the_rows_are_beyond(self) -> None:
        affected, beyond = affected_and_beyond(self.cells(), [U], {})
        self.assertEqual(affected, {U})
        self.assertEqual(beyond, {(U, D, "GBP"): [14, 225382]})

    def test_a_reopened_date_inside_its_wider_window_is_affected_not_beyond(self) -> None:
        affected, beyond = affected_and_beyond(self.cells(), [U], {D: 3})
        self.assertEqual(affected, {D, U})
        self.assertEqual(beyond, {})

    def test_an_upload_past_even_the_wider_window_is_still_beyond(self) -> None:
        affected, beyond = affected_and_beyond(self.cells(), [U], {D: 2})
        self.assertEqual(affected, {U})
        self.assertEqual(list(beyond), [(U, D, "GBP")])

    def test_a_row_dated_after_its_uploads_eve_is_beyond_whatever_the_window(self) -> None:
        future = dt.date(2026, 10, 25)
        cells = {U: [Cell(future, "GBP", 2, 500, True, True, True, None)]}
        _, beyond = affected_and_beyond(cells, [U], {future: 9})
        self.assertEqual(beyond, {(U, future, "GBP"): [2, 500]})


if __name__ == "__main__":
    unittest.main()
