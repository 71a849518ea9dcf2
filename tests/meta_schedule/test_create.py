"""The factories of the package facades (``ms.runner.create("local")`` ...): a component by
name, an instance as it is, and anything else refused with the names it accepts."""
import pytest

from rvm import meta_schedule as ms

# (facade, name -> class, the base class, the text that names what is accepted)
FACTORIES = [
    (ms.builder, {"local": ms.builder.LocalBuilder}, ms.builder.Builder,
     "expected 'local' or a Builder"),
    (ms.runner, {"local": ms.runner.LocalRunner}, ms.runner.Runner,
     r"expected 'local' or a Runner \(on Ray: rvm.distributed.RayRunner\)"),
    (ms.database, {"memory": ms.database.MemoryDatabase}, ms.database.Database,
     "expected 'json', 'memory' or a Database"),
    (ms.cost_model, {"gbt": ms.cost_model.GBTModel, "xgb": ms.cost_model.GBTModel,
                     "random": ms.cost_model.RandomModel}, ms.cost_model.CostModel,
     "expected 'gbt', 'random' or a CostModel"),
    (ms.search_strategy, {"evolutionary": ms.search_strategy.EvolutionarySearch,
                          "replay-trace": ms.search_strategy.ReplayTrace,
                          "replay-func": ms.search_strategy.ReplayFunc},
     ms.search_strategy.SearchStrategy, "'replay-func' or a SearchStrategy"),
    (ms.task_scheduler, {"gradient": ms.task_scheduler.GradientBased,
                         "round-robin": ms.task_scheduler.RoundRobin},
     ms.task_scheduler.TaskScheduler, "expected 'gradient', 'round-robin' or a TaskScheduler"),
]


@pytest.mark.parametrize("facade, kinds, base, expected", FACTORIES,
                         ids=[f[0].__name__.rpartition(".")[2] for f in FACTORIES])
def test_a_factory_makes_each_kind_and_keeps_an_instance(facade, kinds, base, expected):
    made = None
    for kind, cls in kinds.items():
        made = facade.create(kind)
        assert type(made) is cls
    assert facade.create(made) is made
    with pytest.raises(ValueError, match=expected):
        facade.create("no-such-kind")
    with pytest.raises(ValueError, match=expected):
        facade.create(3)


def test_the_json_database_takes_its_work_dir(tmp_path):
    db = ms.database.create("json", work_dir=str(tmp_path))
    assert type(db) is ms.database.JSONDatabase


def test_factory_arguments_reach_the_constructor():
    assert ms.builder.create("local", max_workers=3).max_workers == 3
    assert ms.task_scheduler.create("round-robin", remeasure_top_k=0).remeasure_top_k == 0


def test_the_space_factory_takes_functions_and_lists():
    space = ms.space_generator.create([None, lambda sch: None])
    assert type(space) is ms.space_generator.SpaceGeneratorUnion
    assert [type(g) for g in space.space_generators] == [ms.space_generator.PostOrderApply,
                                                         ms.space_generator.ScheduleFn]
    with pytest.raises(ValueError, match="unknown space 3"):
        ms.space_generator.create(3)


def test_tune_tasks_refuses_a_component_it_does_not_know(tmp_path):
    with pytest.raises(ValueError, match="unknown builder 'remote'; expected 'local'"):
        ms.tune_tasks(tasks=[], task_weights=[], work_dir=str(tmp_path), max_trials_global=1,
                      builder="remote")
