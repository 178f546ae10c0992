"""The rules that decide what a stage's results are and what the release keeps, shared by the stages,
quality control and the release: agreement between answers (``agreement``), the decisions and their
reasons (``decide``), and the reads of decided records (``selectors``). Pure rules over the domain core:
this package imports nothing of the pipeline but the metrics.
"""
