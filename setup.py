from setuptools import find_packages, setup

setup(
    name="gcc_sgcl",
    version="0.1.0",
    description="GCC and SGCL (spectral augmentations for graph contrastive learning) on DGL",
    packages=find_packages(include=["gcc_sgcl", "gcc_sgcl.*"]),
    # the code uses 3.10 syntax; dgl publishes Linux wheels up to CPython 3.11 for 1.1.3 and 3.12 for 2.1.0
    python_requires=">=3.10,<3.13",
    install_requires=[
        # scripts/_env.sh installs torch==2.13.0 on a fresh machine; an existing torch (GCC_SGCL_SYSTEM_TORCH=1,
        # e.g. a CUDA build) is kept from 2.11, the oldest tested
        "torch>=2.11",
        # 1.1.3 where it has wheels (every recorded result was computed with it); 2.1.0, the newest with a Linux
        # wheel for 3.12, there (an 8-step sgcl checkpoint is bit-identical to 1.1.3's). Both are CPU-only builds.
        'dgl==1.1.3; python_version < "3.12"',
        'dgl==2.1.0; python_version >= "3.12"',
        'torchdata>=0.5,<0.10; python_version >= "3.12"',  # dgl 2.1 imports torchdata.datapipes, gone in 0.10
        "pandas",  # imported by dgl 2.1 without being declared, and by the report's tests over datasets
        "packaging",  # imported by dgl 1.1.3 without being declared
        "numpy",
        "scipy",
        "scikit-learn",
        "networkx",
        "tensorboard",
        "tqdm",
        "matplotlib",
        "psutil",  # imported by dgl 1.1.3 without being declared
        "threadpoolctl",
        "requests",
        # the SGCL paper's baselines (docs/baselines.md), imported only by them: the WL subtree kernel (wl-kernel)
        # and Doc2Vec (graph2vec); the versions tested here, with numpy 2.4
        "grakel>=0.1.11",
        "gensim>=4.4",
        # the report's tests over datasets (docs/results.md): Friedman/Nemenyi post-hoc and the critical-difference
        # diagram (scikit-posthocs), the Bayesian signed-rank test (baycomp); imported only by gcc_sgcl.experiments
        "scikit-posthocs>=0.9",
        "baycomp>=1.0.3",
        "statsmodels",  # Holm's correction of the report's families of tests (multipletests)
    ],
    extras_require={"test": ["pytest"]},
)
