"""The models the importer tests run: an MLP, a small CNN and a transformer encoder block,
with helpers to run them through rvm and through torch."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn


class MLP(nn.Module):
    """784-128-10 with ReLU (seed 004's model)."""

    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 128)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


def seeded(model_class, seed=0):
    """An instance in eval mode with reproducible weights."""
    torch.manual_seed(seed)
    return model_class().eval()


def run_torch(model, x):
    """The model's output on the numpy array ``x``, as numpy."""
    with torch.no_grad():
        return model(torch.from_numpy(x)).numpy()


def assert_close(actual, expected):
    """Within 1e-4 relative (and 1e-5 absolute for values near 0)."""
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-5)
