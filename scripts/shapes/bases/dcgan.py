# shapes-base: dcgan
# shapes-inputs: z=[4,16,1,1]
# shapes-wrong-input: conv_transpose_in_channels input:submodule z=[4,100,1,1]
# shapes-wrong-input: conv_rank input:submodule z=[4,16]
import torch
import torch.nn.functional as F
from torch import nn

nz, ngf, ndf, nc = 16, 8, 8, 3

# @module


class Generator(nn.Module):
    def __init__(self):
        super().__init__()
        self.project = nn.Sequential(
            nn.ConvTranspose2d(nz, ngf * 4, 4, 1, 0, bias=False),
            nn.BatchNorm2d(ngf * 4),
            nn.ReLU(True),
        )
        self.upsample = nn.Sequential(
            nn.ConvTranspose2d(ngf * 4, ngf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf * 2),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf * 2, ngf, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ngf),
            nn.ReLU(True),
            nn.ConvTranspose2d(ngf, nc, 4, 2, 1, bias=False),
            nn.Tanh(),
        )
        # @init Generator

    # @methods Generator
    def forward(self, noise):
        feat = self.project(noise)
        # @point Generator feat 4,32,4,4
        return self.upsample(feat)


class Discriminator(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(nc, ndf, 4, 2, 1, bias=False),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf, ndf * 2, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 2),
            nn.LeakyReLU(0.2, inplace=True),
            nn.Conv2d(ndf * 2, ndf * 4, 4, 2, 1, bias=False),
            nn.BatchNorm2d(ndf * 4),
            nn.LeakyReLU(0.2, inplace=True),
        )
        self.classifier = nn.Sequential(nn.Conv2d(ndf * 4, 1, 4, 1, 0, bias=False), nn.Sigmoid())
        # @init Discriminator

    # @methods Discriminator
    def forward(self, img):
        feat = self.features(img)
        # @point Discriminator feat 4,32,4,4
        return self.classifier(feat)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.netG = Generator()
        self.netD = Discriminator()
        # @init Model

    # @methods Model
    def forward(self, z):
        fake = self.netG(z)
        # @point Model fake 4,3,32,32
        score = self.netD(fake)
        return score.view(-1, 1).squeeze(1)
