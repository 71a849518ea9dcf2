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


class CNN(nn.Module):
    """(conv, batch norm, relu, max pool) x 2, then a linear layer; 28x28 single-channel."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.bn2 = nn.BatchNorm2d(16)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 7 * 7, 10)
        for bn in (self.bn1, self.bn2):  # running statistics as after training
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
            bn.weight.data.uniform_(0.5, 1.5)
            bn.bias.data.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = self.pool(torch.relu(self.bn1(self.conv1(x))))
        x = self.pool(torch.relu(self.bn2(self.conv2(x))))
        return self.fc(torch.flatten(x, 1))


class EncoderBlock(nn.Module):
    """A transformer encoder block: multi-head self-attention and a GELU MLP, each with a
    residual connection and layer normalization (post-norm), batch first."""

    def __init__(self, dim=64, heads=4):
        super().__init__()
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        self.ff1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.ff2 = nn.Linear(4 * dim, dim)
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        a, _ = self.attn(x, x, x, need_weights=False)
        x = self.norm1(x + self.drop(a))
        return self.norm2(x + self.drop(self.ff2(self.act(self.ff1(x)))))


# model, the shape of one example (no batch dimension)
MODELS = {"mlp": (MLP, (784,)), "cnn": (CNN, (1, 28, 28)), "encoder": (EncoderBlock, (7, 64))}


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
