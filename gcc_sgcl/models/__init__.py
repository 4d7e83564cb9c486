"""Graph encoders."""
from gcc_sgcl.models.encoder import GraphEncoder, build_encoder
from gcc_sgcl.models.gin import UnsupervisedGIN

__all__ = ["GraphEncoder", "UnsupervisedGIN", "build_encoder"]
