"""The one result type of ``companion doctor``'s checks, in its own module so that check
modules (edge/doctor.py, edge/doctor_system.py) share it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Check:
    """What one check found. ``required`` decides whether ``ok=False`` fails the doctor
    (FAIL, exit 1) or only warns (an optional part, a state that may be on purpose)."""

    name: str
    ok: bool
    lines: list[str] = field(default_factory=list)
    fix: str | None = None
    required: bool = True

    @property
    def mark(self) -> str:
        return "ok  " if self.ok else ("FAIL" if self.required else "warn")
