"""Module-level tools for pickling tests (pickle resolves them by reference)."""

from agents.tools import tool


@tool
def greet(name: str, excited: bool = False) -> str:
    """Greet someone.

    Args:
        name: Who to greet.
        excited: Add an exclamation mark.
    """
    return f"hello {name}" + ("!" if excited else "")


@tool(permission="write")
async def store_value(key: str, value: int) -> str:
    """Store a value.

    Args:
        key: Where.
        value: What.
    """
    return f"{key}={value}"
