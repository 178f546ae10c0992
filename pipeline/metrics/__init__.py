"""Scoring of model predictions against ScreenQA ground truth (the official metrics).

Modules:
- ``matching``: the answer-matching procedure of paper v1 (2.3.3) with nDCG_v and item F1 (eq. 1-5);
- ``squad``: SQA-S (SQuAD-normalised EM / F1 over short answers);
- ``uic``: SQA-UIC (element texts) and SQA-UIC-BB (elements with boxes, Hungarian matching);
- ``anls``: ANLS for DocVQA-format files;
- ``scorer``: reads gold and prediction files, joins them and averages per task.

Every function here is pure Python over plain data (no models, no database).
"""
