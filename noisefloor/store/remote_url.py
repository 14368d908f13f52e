"""Which remote a URL names: `s3://`, `gs://` and `az://` served by obstore (an optional extra),
`file://` by Python's own file calls; a URL it cannot serve refused with the forms it takes.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from noisefloor.errors import RemoteError
from noisefloor.store.remote import Remote

__all__ = ["SCHEMES", "open_remote"]

#: The URL schemes of a remote.
SCHEMES = ("s3", "gs", "az", "file")


def open_remote(url: str) -> Remote:
    """The remote a URL names: `s3://bucket/prefix`, `gs://bucket/prefix`,
    `az://container/prefix`, or `file:///shared/path`.

    Raises:
        RemoteError: The URL names no remote this package serves, or its library is missing.
    """
    parts = urlsplit(url)
    if parts.scheme not in SCHEMES:
        raise RemoteError(
            f"remote {url!r}: not a remote URL",
            hint="give s3://BUCKET/PREFIX, gs://BUCKET/PREFIX, az://CONTAINER/PREFIX "
            "or file:///SHARED/PATH",
        )
    if parts.scheme == "file":
        if parts.netloc not in ("", "localhost") or not parts.path.startswith("/"):
            raise RemoteError(
                f"remote {url!r}: a file remote names an absolute path",
                hint="e.g. file:///mnt/shared/noisefloor (three slashes)",
            )
        from noisefloor.store.remote_files import FileRemote

        return FileRemote(url, parts.path)
    if not parts.netloc:
        raise RemoteError(f"remote {url!r}: no bucket", hint=f"e.g. {parts.scheme}://BUCKET/PREFIX")
    try:
        from noisefloor.store.remote_cloud import CloudRemote
    except ImportError as exc:
        raise RemoteError(
            f"remote {url}: {parts.scheme}:// needs the obstore library ({exc})",
            hint="install noisefloor[remote]",
        ) from None
    return CloudRemote(url)
