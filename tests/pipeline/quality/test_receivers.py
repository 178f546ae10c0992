"""The stages tell quality control what happened without importing it (docs/architecture.md, "Layers"):
the receivers are connected in every process once Django has started."""

from pipeline.stages import signals


def test_quality_control_receives_what_the_review_stage_reports():
    # given Django started (pipeline.apps), then each signal has quality control's receiver, once
    for signal in (signals.review_recorded, signals.reviews_withdrawn):
        receivers = list(signal._live_receivers(sender=object)[0])
        assert [r.__module__ for r in receivers] == ["pipeline.quality.receivers"]


def test_every_job_kind_is_installed_at_start_up():
    from annotation.models import AssistJob, ImportJob, MemberJob, ReleaseJob
    from pipeline.jobs.kinds import KINDS

    assert set(KINDS) == {ImportJob.kind, MemberJob.kind, AssistJob.kind, *ReleaseJob.Kind.values}
