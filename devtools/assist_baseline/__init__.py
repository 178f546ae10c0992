"""The baseline suggestion backend (docs/assist.md): its own process, no model weights.

``python -m devtools.assist_baseline --port 8765`` serves the contract of ``pipeline.assist.contract``
(``POST /suggest``, ``GET /health``): VH candidates ranked for a question by text and layout features
(``ranker``), pre-filtering judgments from the candidates' text, and short answers from the paper's
prompt over an OpenAI-compatible endpoint when one is given (``--openai-url``), else from the rules.
"""
