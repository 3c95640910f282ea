"""Meta-embedding methods and the MetaEncoder, on small synthetic arrays and tiny encoders."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
import scipy.linalg
from conftest import CORPUS

import sentforge
from sentforge import CallableEncoder
from sentforge.support.errors import ConfigError, ModelNotFoundError
from sentforge.meta import (GCCA, SVD, AutoEncoder, Average, Concatenation, MetaEncoder, MetaMethod, UpProjection,
                            method_class, method_names, register_method)
from sentforge.meta.cache import cache_path

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _views(n=300, dims=(6, 9, 4), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.normal(size=(n, d)).astype(np.float32) + rng.normal(size=d).astype(np.float32) for d in dims]


def _unit(array):
    array = np.asarray(array, dtype=np.float64)
    return array / np.linalg.norm(array, axis=1, keepdims=True)


def _align_signs(actual, expected):
    signs = np.sign(np.sum(actual * expected, axis=0))
    return actual * signs


# ---------------------------------------------------------------- methods on arrays
def test_concat_is_concatenation_of_normalised_members():
    views = _views()
    out = Concatenation().fit_transform(views)
    assert out.dtype == np.float32 and out.shape == (300, 19)
    np.testing.assert_allclose(out, np.hstack([_unit(v) for v in views]), atol=1e-6)


def test_average_zero_pads_to_largest_member():
    views = _views(dims=(3, 5))
    out = Average().fit_transform(views)
    assert out.shape == (300, 5)
    a, b = _unit(views[0]), _unit(views[1])
    np.testing.assert_allclose(out[:, :3], (a + b[:, :3]) / 2, atol=1e-6)
    np.testing.assert_allclose(out[:, 3:], b[:, 3:] / 2, atol=1e-6)  # the padded columns hold member b alone


def test_svd_equals_numpy_svd_of_centred_concatenation():
    views, test_views = _views(), _views(n=50, seed=1)
    method = SVD(dim=7).fit(views)
    concat = np.hstack([_unit(v) for v in views])
    mean = concat.mean(axis=0)
    _, singular, vt = np.linalg.svd(concat - mean, full_matrices=False)
    np.testing.assert_allclose(method.singular_values, singular[:7], rtol=1e-4)
    expected = (np.hstack([_unit(v) for v in test_views]) - mean) @ vt[:7].T
    actual = method.transform(test_views)
    np.testing.assert_allclose(_align_signs(actual, expected), expected, atol=1e-4)
    # the fit sentences' own coordinates are U S
    u_s = (concat - mean) @ vt[:7].T
    np.testing.assert_allclose(np.abs(method.transform(views)), np.abs(u_s), atol=1e-4)


def test_gcca_solves_the_regularised_generalised_eigenproblem():
    views, tau = _views(dims=(5, 8, 3)), 0.3
    method = GCCA(dim=6, tau=tau).fit(views)
    # Sigma and D built independently from the normalised members
    units = [_unit(v) for v in views]
    concat = np.hstack(units)
    sigma = np.cov(concat, rowvar=False, bias=True)
    within = np.zeros_like(sigma)
    start = 0
    for unit in units:
        d = unit.shape[1]
        block = slice(start, start + d)
        sigma[block, block] += tau * np.trace(sigma[block, block]) / d * np.eye(d)
        within[block, block] = sigma[block, block]
        start += d
    theta, rho = method.projection.astype(np.float64), method.eigenvalues.astype(np.float64)
    np.testing.assert_allclose(sigma @ theta, within @ theta * rho, atol=1e-5)
    np.testing.assert_allclose(theta.T @ within @ theta, np.eye(6), atol=1e-5)  # D-orthonormal
    assert np.all(np.diff(rho) <= 1e-9)  # largest first
    all_rho = scipy.linalg.eigh(sigma, within, eigvals_only=True)
    np.testing.assert_allclose(rho, all_rho[::-1][:6], rtol=1e-4)
    # F(s) = sum_j Theta_j^T (F_j(s) - mu_j)
    test_views = _views(n=20, dims=(5, 8, 3), seed=3)
    expected = (np.hstack([_unit(v) for v in test_views]) - concat.mean(axis=0)) @ theta
    np.testing.assert_allclose(method.transform(test_views), expected, atol=1e-5)


def _heldout_r2(features_fit, target_fit, features_test, target_test):
    from sklearn.linear_model import LinearRegression

    model = LinearRegression().fit(features_fit, target_fit)
    return model.score(features_test, target_test)


def test_gcca_recovers_shared_signal_better_than_any_single_view():
    rng = np.random.default_rng(7)
    n, k = 4000, 3
    latent = rng.normal(size=(n, k))
    views = []
    for d in (12, 16, 10):
        mixing = rng.normal(size=(k, d))
        private = rng.normal(size=(n, 2)) @ rng.normal(size=(2, d)) * 2  # view-specific structure
        views.append((latent @ mixing + private + rng.normal(scale=2.0, size=(n, d)) + 5).astype(np.float32))
    fit, test = slice(0, n // 2), slice(n // 2, n)
    method = GCCA(dim=k, tau=0.01).fit([v[fit] for v in views])
    meta_r2 = _heldout_r2(method.transform([v[fit] for v in views]), latent[fit],
                          method.transform([v[test] for v in views]), latent[test])
    single_r2 = [_heldout_r2(v[fit], latent[fit], v[test], latent[test]) for v in views]
    assert meta_r2 > max(single_r2) + 0.05, (meta_r2, single_r2)


@pytest.mark.parametrize("loss,hidden", [("mse", 0), ("mae", 1), ("kl", 2), ("cos2", 0)])
def test_autoencoder_loss_falls(loss, hidden):
    views = _views(n=200)
    method = AutoEncoder(dim=8, hidden_layers=hidden, loss=loss, epochs=40, batch_size=100, lr=1e-2, seed=0)
    out = method.fit_transform(views)
    assert out.shape == (200, 8) and len(method.loss_history) == 40
    assert method.loss_history[-1] < 0.8 * method.loss_history[0], method.loss_history[::10]


def test_autoencoder_is_seeded():
    views = _views(n=100)
    runs = [AutoEncoder(dim=4, hidden_layers=1, epochs=5, batch_size=30, seed=seed).fit_transform(views)
            for seed in (0, 0, 1)]
    np.testing.assert_array_equal(runs[0], runs[1])
    assert not np.allclose(runs[0], runs[2])


def test_autoencoder_meta_vector_is_sum_of_member_codes():
    import torch

    views = _views(n=40)
    method = AutoEncoder(dim=5, epochs=2, batch_size=40).fit(views)
    codes = [encoder(torch.from_numpy(_unit(v).astype(np.float32))).detach().numpy()
             for encoder, v in zip(method.model.encoders, views)]
    np.testing.assert_allclose(method.transform(views), sum(codes), atol=1e-5)


def test_upprojection_shape_range_and_seed():
    views = _views(dims=(16, 4))
    method = UpProjection(dim=64, seed=3).fit(views)
    out = method.transform(views)
    assert out.shape == (300, 64)
    for matrix, d in zip(method.matrices, (16, 4)):
        assert matrix.shape == (d, 64)
        assert np.abs(matrix).max() <= 1 / np.sqrt(d)
        assert np.abs(matrix).max() > 0.9 / np.sqrt(d)  # spans the range, not a narrower one
    np.testing.assert_allclose(out, _unit(views[0]) @ method.matrices[0] + _unit(views[1]) @ method.matrices[1],
                               atol=1e-5)
    np.testing.assert_array_equal(UpProjection(dim=64, seed=3).fit_transform(views), out)
    assert not np.allclose(UpProjection(dim=64, seed=4).fit_transform(views), out)


def test_method_input_checks():
    views = _views()
    with pytest.raises(ConfigError, match="fit"):
        GCCA(dim=3).transform(views)
    with pytest.raises(ConfigError, match="exceeds"):
        SVD(dim=100).fit(views)
    with pytest.raises(ConfigError, match="rows"):
        Concatenation().fit([views[0], views[1][:10]])
    with pytest.raises(ConfigError, match="dimensions"):
        Concatenation().fit(views).transform(views[:2])
    with pytest.raises(ConfigError, match="tau"):
        GCCA(dim=3, tau=0).fit(views)
    with pytest.raises(ConfigError, match="unknown meta-embedding method"):
        method_class("pca")
    with pytest.raises(ConfigError, match="loss"):
        AutoEncoder(loss="huber")


# ---------------------------------------------------------------- MetaEncoder with tiny encoders
def _hash_features(batch):
    """A deterministic 'encoder' that is not a torch model: 6 features from a text digest."""
    rows = [np.frombuffer(hashlib.sha256(t.encode()).digest()[:6], dtype=np.uint8) for t in batch]
    return np.asarray(rows, dtype=np.float32) - 127.5


@pytest.fixture()
def glove_file(tmp_path):
    rng = np.random.default_rng(0)
    words = sorted({w for text in CORPUS for w in text.split()})
    lines = [w + " " + " ".join(f"{x:.4f}" for x in rng.normal(size=5)) for w in words]
    path = tmp_path / "glove.txt"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def members(tiny_bert_dir, glove_file):
    return [sentforge.load(tiny_bert_dir), sentforge.load(f"glove:{glove_file}")]


TEXTS = ["a man is playing a guitar", "the cat sat on the mat", "where can i change the language", "a dog"]


def test_meta_encoder_equals_method_transform_of_member_encodes(members):
    meta = MetaEncoder(members, "gcca", dim=6, tau=0.1).fit(CORPUS)
    expected = meta.method.transform([m.encode(TEXTS) for m in members])
    np.testing.assert_allclose(meta.encode(TEXTS, batch_size=3), expected, atol=1e-6)
    assert meta.dim == 6 and meta.encode(TEXTS).shape == (4, 6)
    assert meta.encode("a dog").shape == (6,)
    assert meta.encode([]).shape == (0, 6)
    np.testing.assert_allclose(np.linalg.norm(meta.encode(TEXTS, normalize=True), axis=1), 1, atol=1e-5)
    # a fitted ensemble is itself an encoder: it can be a member of another one
    outer = MetaEncoder([meta, members[1]], "concat").fit(CORPUS)
    assert outer.encode(TEXTS).shape == (4, 6 + 5)


@pytest.mark.parametrize("method,params", [("concat", {}), ("average", {}), ("svd", {"dim": 6}),
                                           ("gcca", {"dim": 6}), ("upprojection", {"dim": 40}),
                                           ("autoencoder", {"dim": 6, "epochs": 3, "batch_size": 16})])
def test_save_load_round_trip_by_reference(members, tmp_path, method, params):
    meta = MetaEncoder(members, method, **params).fit(CORPUS)
    meta.save(tmp_path / "meta")
    loaded = MetaEncoder.load(tmp_path / "meta")
    assert loaded.method.config() == meta.method.config()
    np.testing.assert_array_equal(loaded.encode(TEXTS), meta.encode(TEXTS))


def test_save_load_round_trip_embedded_and_refuses_overwrite(members, tmp_path):
    from sentforge.support.errors import OutputExistsError

    meta = MetaEncoder(members, "svd", dim=5).fit(CORPUS)
    meta.save(tmp_path / "meta", embed_members=True)
    assert (tmp_path / "meta" / "members" / "0" / "modules.json").is_file()
    np.testing.assert_array_equal(MetaEncoder.load(tmp_path / "meta").encode(TEXTS), meta.encode(TEXTS))
    with pytest.raises(OutputExistsError):
        meta.save(tmp_path / "meta")
    meta.save(tmp_path / "meta", overwrite=True)


class CentredFirstMember(MetaMethod):
    """A user's own method: the first member's unit vectors minus their mean over the fit sentences."""

    method_name = "centred-first"

    @property
    def output_dim(self) -> int:
        return self.input_dims[0]

    def _fit(self, views):
        self.mean = views[0].mean(axis=0)

    def _transform(self, views):
        return views[0] - self.mean

    def parameters(self):
        return {"mean": self.mean}

    def _set_parameters(self, parameters):
        self.mean = self._require(parameters, "mean")


@pytest.fixture()
def own_method_registry(monkeypatch):
    """The method registry, restored after the test."""
    from sentforge.meta import registry

    monkeypatch.setattr(registry, "METHODS", dict(registry.METHODS))


def test_a_users_own_method_registers_and_round_trips(members, tmp_path, own_method_registry):
    built_in = method_names()
    assert register_method(CentredFirstMember) is CentredFirstMember
    register_method(CentredFirstMember)  # the same class again changes nothing
    assert method_names() == [*built_in, "centred-first"] and method_class("centred-first") is CentredFirstMember
    meta = MetaEncoder(members, "centred-first").fit(CORPUS)
    first = _unit(members[0].encode(TEXTS))
    expected = first - _unit(members[0].encode(CORPUS)).mean(axis=0)
    np.testing.assert_allclose(meta.encode(TEXTS), expected, atol=1e-5)
    meta.save(tmp_path / "meta")
    np.testing.assert_array_equal(MetaEncoder.load(tmp_path / "meta").encode(TEXTS), meta.encode(TEXTS))

    class OtherGCCA(CentredFirstMember):
        method_name = "gcca"

    with pytest.raises(ConfigError, match="two meta-embedding methods are named 'gcca'"):
        register_method(OtherGCCA)
    assert method_class("gcca") is GCCA


def test_missing_members_give_clear_errors(members, glove_file, tmp_path):
    import shutil

    meta = MetaEncoder(members, "concat").fit(CORPUS)
    meta.save(tmp_path / "by-ref")
    meta.save(tmp_path / "embedded", embed_members=True)
    glove_file.unlink()
    with pytest.raises(ModelNotFoundError, match=r"member 1 .*glove"):
        MetaEncoder.load(tmp_path / "by-ref")
    shutil.rmtree(tmp_path / "embedded" / "members" / "0")
    with pytest.raises(ModelNotFoundError, match="embedded member 0"):
        MetaEncoder.load(tmp_path / "embedded")
    with pytest.raises(ModelNotFoundError, match="not a saved MetaEncoder"):
        MetaEncoder.load(tmp_path)


def test_member_without_spec_must_be_embedded(members, tmp_path):
    anonymous = CallableEncoder(_hash_features, name="hash", dim=6)
    meta = MetaEncoder([members[1], anonymous], "concat").fit(CORPUS)
    with pytest.raises(ConfigError, match="no spec"):
        meta.save(tmp_path / "a")
    with pytest.raises(ConfigError, match="cannot be embedded"):
        meta.save(tmp_path / "b", embed_members=True)
    assert not (tmp_path / "a").exists()


def test_fit_corpus_embeddings_are_cached_by_spec_and_corpus(members, tmp_path):
    calls = []

    def counting(batch):
        calls.extend(batch)
        return _hash_features(batch)

    member = CallableEncoder(counting, name="hash", dim=6, spec="hash-features")
    MetaEncoder([member, members[1]], "gcca", dim=4).fit(CORPUS, cache_dir=tmp_path)
    assert set(CORPUS) <= set(calls)
    calls.clear()
    first = MetaEncoder([member, members[1]], "gcca", dim=4).fit(CORPUS, cache_dir=tmp_path)
    assert not set(CORPUS) & set(calls)  # the second fit read the npy cache (only the key's probe texts ran)
    assert cache_path(tmp_path, member, CORPUS).is_file()
    assert cache_path(tmp_path, member, CORPUS[:-1]) != cache_path(tmp_path, member, CORPUS)
    # the key includes what the member computes: changed weights never reuse stale vectors
    bert = members[0]
    before = cache_path(tmp_path, bert, CORPUS)
    import torch

    with torch.no_grad():  # random noise: a constant shift of the word embeddings would be undone by LayerNorm
        weights = next(bert.parameters())
        weights.add_(torch.randn(weights.shape, generator=torch.Generator().manual_seed(0)))
    assert cache_path(tmp_path, bert, CORPUS) != before
    uncached = MetaEncoder([member, members[1]], "gcca", dim=4).fit(CORPUS)
    np.testing.assert_allclose(uncached.encode(TEXTS), first.encode(TEXTS), atol=1e-6)


def test_unfitted_meta_encoder_and_bad_members():
    member = CallableEncoder(_hash_features, name="hash", dim=6)
    meta = MetaEncoder([member], "svd", dim=2)
    with pytest.raises(ConfigError, match="fit"):
        meta.encode(TEXTS)
    with pytest.raises(ConfigError, match="at least one member"):
        MetaEncoder([], "concat")
    with pytest.raises(ConfigError, match="not an encoder"):
        MetaEncoder(["all-MiniLM-L6-v2"], "concat")
