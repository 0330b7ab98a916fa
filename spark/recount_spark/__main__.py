"""`python -m recount_spark COMMAND ...`: see `recount_spark.cli`."""

from recount_spark.cli import main

main()
