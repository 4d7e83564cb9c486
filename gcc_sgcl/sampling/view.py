"""Names of the per-node features every sampled view carries.

A *view* is a small ``dgl.DGLGraph`` (bidirected, no self-loops) whose node 0 is the centre node, with:

==============  ===========  ==========================================================================
name            shape/dtype  meaning
==============  ===========  ==========================================================================
``PE``          (n, k) f32   positional embedding fed to the encoder (GCC: eigenvectors of the k
                             smallest normalised-Laplacian eigenvalues, rows L2-normalised, zero-padded)
``EIGVEC``      (n, k) f32   the same eigenvectors before row normalisation (used by the spectral crop)
``EIGVAL``      (n, k) f32   eigenvalue of each PE column (same for every row); NaN for padded columns
``SEED``        (n,) i64     1 for the centre node, 0 elsewhere
``dgl.NID``     (n,) i64     id of each node in the parent graph
``GLOBAL``      (n, d) f32   optional: rows of the parent graph's global embedding (for alignment)
==============  ===========  ==========================================================================
"""
import dgl

PE = "pos_undirected"
EIGVEC = "eigvec"
EIGVAL = "eigval"
SEED = "seed"
NID = dgl.NID
GLOBAL = "global_emb"
