"""Graph encoders."""
from gcc_sgcl.models.encoder import GraphEncoder
from gcc_sgcl.models.gin import UnsupervisedGIN

__all__ = ["GraphEncoder", "UnsupervisedGIN"]
