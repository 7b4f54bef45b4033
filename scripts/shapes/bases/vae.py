# shapes-base: vae
# shapes-inputs: x=[4,1,28,28]
# shapes-wrong-input: view_numel input:forward x=[4,1,32,32]
import torch
import torch.nn.functional as F
from torch import nn

# @module


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)
        # @init Model

    # @methods Model
    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        # @point Model h1 4,400
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        # @point Model h3 4,400
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, 784))
        z = self.reparameterize(mu, logvar)
        # @point Model z 4,20
        return self.decode(z), mu, logvar
