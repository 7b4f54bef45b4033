"""A CIFAR-10 CNN whose classifier was sized for 28x28 images."""
import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 16, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(16 * 14 * 14, 10)  # 28x28 pooled to 14x14

    def forward(self, x):
        h = self.pool(torch.relu(self.conv(x)))
        h = h.flatten(1)
        return self.fc(h)
