"""The public ``rewardhub_registry`` fixture: a test's own rewards are gone after it."""

import pytest

import rewardhub

pytest_plugins = ["pytester"]


def test_a_reward_registered_in_a_test_is_gone_after_it(pytester):
    pytester.makepyfile(
        """
        import rewardhub

        @rewardhub.sample_reward(name="fixture_probe")
        def probe(text):
            return 1.0

        def test_registers(rewardhub_registry):
            rewardhub_registry.add(probe)
            assert rewardhub.get("fixture_probe")(["p"], ["x"]) == [1.0]

        def test_is_gone_after():
            assert "fixture_probe" not in rewardhub.registry
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)


def test_a_replaced_builtin_gets_its_original_back():
    original = rewardhub.registry.spec("exact_match")

    @rewardhub.sample_reward(name="exact_match")
    def stand_in(text):
        return 0.5

    with rewardhub.registry.isolated() as registry:
        registry.add(stand_in, replace=True)
        assert rewardhub.get("exact_match")(["p"], ["x"]) == [0.5]
    assert rewardhub.registry.spec("exact_match") is original


def test_a_duplicate_inside_the_block_is_still_an_error():
    with rewardhub.registry.isolated() as registry, pytest.raises(rewardhub.DuplicateRewardError):

        @rewardhub.sample_reward(name="exact_match")
        def twin(text):
            return 0.0

        registry.add(twin)
