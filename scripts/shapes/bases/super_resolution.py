# shapes-base: super_resolution
# shapes-inputs: x=[2,1,12,12]
# shapes-wrong-input: conv_in_channels input:forward x=[2,3,12,12]
import torch
import torch.nn.functional as F
from torch import nn

# @module


class Model(nn.Module):
    def __init__(self, upscale_factor=3):
        super().__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 64, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(64, 64, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(64, 32, (3, 3), (1, 1), (1, 1))
        self.conv4 = nn.Conv2d(32, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        # @init Model

    # @methods Model
    def forward(self, x):
        x = self.relu(self.conv1(x))
        # @point Model x 2,64,12,12
        x = self.relu(self.conv2(x))
        x = self.relu(self.conv3(x))
        # @point Model x 2,32,12,12
        x = self.pixel_shuffle(self.conv4(x))
        # @point Model x 2,1,36,36
        return x
