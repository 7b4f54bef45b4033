# shapes-base: mnist_hogwild
# shapes-inputs: x=[4,1,28,28]
# shapes-wrong-input: view_numel input:forward x=[4,1,32,32]
# shapes-wrong-input: conv_too_small input:forward x=[4,1,12,12]
import torch
import torch.nn.functional as F
from torch import nn

# @module


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 10, kernel_size=5)
        self.conv2 = nn.Conv2d(10, 20, kernel_size=5)
        self.conv2_drop = nn.Dropout2d()
        self.fc1 = nn.Linear(320, 50)
        self.fc2 = nn.Linear(50, 10)
        # @init Model

    # @methods Model
    def forward(self, x):
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        # @point Model x 4,10,12,12
        x = F.relu(F.max_pool2d(self.conv2_drop(self.conv2(x)), 2))
        # @point Model x 4,20,4,4
        x = x.view(-1, 320)
        x = F.relu(self.fc1(x))
        # @point Model x 4,50
        x = F.dropout(x, training=self.training)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)
