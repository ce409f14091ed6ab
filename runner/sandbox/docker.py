"""The `docker` backend (placeholder until the container backend lands)."""


class DockerBackend:
    name = "docker"

    @classmethod
    def unavailable_reason(cls) -> str:
        return "the docker backend is not built yet"

    @classmethod
    def available(cls) -> bool:
        return not cls.unavailable_reason()
