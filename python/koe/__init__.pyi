"""koe: a voice changer on numpy arrays, WORLD with pyworld's API, and `koe convert` on files (see __init__.py)."""

import os
from typing import FrozenSet, List, Optional, Sequence, TypeVar, Union

import numpy as np
import numpy.typing as npt

from . import world as world

_Audio = TypeVar("_Audio", npt.NDArray[np.float32], npt.NDArray[np.float64])
_Path = Union[str, os.PathLike]
_Value = Union[bool, int, float, str, os.PathLike, Sequence[str]]

CONVERT_OPTIONS: FrozenSet[str]

def convert(input: _Path, output: _Path, **options: _Value) -> None: ...

class VoiceChanger:
    def __init__(self, sample_rate: int, channels: int = ..., live: bool = ..., threads: int = ...) -> None: ...
    @property
    def sample_rate(self) -> int: ...
    @property
    def channels(self) -> int: ...
    @property
    def live(self) -> bool: ...
    @property
    def latency(self) -> int: ...
    pitch: float
    semitones: float
    formant: float
    gain_db: float
    pitch_range: float
    pitch_median: Optional[float]
    whisper: bool
    limit: bool
    @property
    def preset(self) -> Optional[str]: ...
    @preset.setter
    def preset(self, name: str) -> None: ...
    @property
    def eq(self) -> List[str]: ...
    @eq.setter
    def eq(self, specs: Union[str, Sequence[str]]) -> None: ...
    def process(self, x: _Audio) -> _Audio: ...
    def finish(self) -> npt.NDArray[Union[np.float32, np.float64]]: ...
    def reset(self) -> None: ...
