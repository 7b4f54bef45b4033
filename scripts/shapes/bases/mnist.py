# shapes-base: mnist
# shapes-inputs: x=[4,1,28,28]
# shapes-wrong-input: conv_in_channels input:forward x=[4,3,28,28]
# shapes-wrong-input: linear_in input:forward x=[4,1,32,32]
# shapes-wrong-input: conv_too_small input:forward x=[4,1,4,4]
# shapes-wrong-input: pool_too_small input:forward x=[4,1,5,5]
import torch
import torch.nn.functional as F
from torch import nn

# @module


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 32, 3, 1)
        self.conv2 = nn.Conv2d(32, 64, 3, 1)
        self.dropout1 = nn.Dropout(0.25)
        self.dropout2 = nn.Dropout(0.5)
        self.fc1 = nn.Linear(9216, 128)
        self.fc2 = nn.Linear(128, 10)
        # @init Model

    # @methods Model
    def forward(self, x):
        x = self.conv1(x)
        x = F.relu(x)
        # @point Model x 4,32,26,26
        x = self.conv2(x)
        x = F.relu(x)
        x = F.max_pool2d(x, 2)
        # @point Model x 4,64,12,12
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = self.fc1(x)
        x = F.relu(x)
        # @point Model x 4,128
        x = self.dropout2(x)
        x = self.fc2(x)
        output = F.log_softmax(x, dim=1)
        return output
