"""Model assistance (docs/assist.md): suggestions from a pluggable backend, computed ahead and cached.

* ``contract``: the one HTTP contract (what is sent, what a backend answers, how it is checked);
* ``client``: the call, with the project's URL, token and timeout;
* ``service``: computing suggestions ahead (the ``suggestions`` job's work) and reading them;
* ``use``: what an annotator did with a suggestion, and the quality rule about accepting wrong ones;
* ``report``: the lead's figures (the backend's error rate, per annotator acceptance).
"""
