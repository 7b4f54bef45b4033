"""A model torch.compile cannot capture in one graph: the `if` reads a tensor's value.

`staticfx check examples/graph_break.py` reports FX101 on the `if`;
`staticfx fix --unsafe-fixes examples/graph_break.py` rewrites it with torch.where.
"""
import torch
import torch.nn as nn


class GatedNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(16, 16)

    def forward(self, x):
        h = self.fc(x)
        if h.mean() > 0:
            h = torch.relu(h)
        return h
