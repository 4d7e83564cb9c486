from setuptools import find_packages, setup

setup(
    name="gcc_sgcl",
    version="0.1.0",
    description="GCC and SGCL (spectral augmentations for graph contrastive learning) on DGL",
    packages=find_packages(include=["gcc_sgcl", "gcc_sgcl.*"]),
    python_requires=">=3.10,<3.12",  # dgl==1.1.3 publishes wheels for CPython 3.8-3.11 only; the code uses 3.10 syntax
    install_requires=[
        "torch==2.13.0",
        "dgl==1.1.3",
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
    ],
    extras_require={"test": ["pytest"]},
)
