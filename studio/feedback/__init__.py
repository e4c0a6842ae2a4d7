"""Teammates' feedback on a run's answers: the database (store), its review (agreement, counts) and the datasets
made from it (alpaca instruction rows, ranking pairs, KTO rows)."""
