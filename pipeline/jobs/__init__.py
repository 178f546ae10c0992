"""Background jobs: one lifecycle for every kind (imports, post-processing, short answers, exports).

* ``lifecycle``  the states and every transition: create, claim, finish, fail, the stale rule, re-run;
                 and the contract of a work function (``Progress``, ``Outcome``);
* ``runner``     runs one claimed job: the heartbeat and progress thread around its work function;
* ``kinds``      the registry of kinds (the table itself, each kind's model and work function, is
                 ``pipeline.kinds``, one layer up: the work functions use this package);
* ``tasks``      the one Celery task, which runs any kind;
* ``queue``      queueing a run once the transaction commits (or on a thread, embedded default).

Each area supplies only its work function (and the service that validates a lead's request and calls
``lifecycle.job_create``). docs/architecture.md ("Jobs") and docs/operations.md describe the rules.
"""
