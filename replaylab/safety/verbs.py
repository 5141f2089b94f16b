"""Tool-name verbs: the last evidence before "unknown ⇒ mutating".

A tool none of the declared classes, Claude Code's built-in list or OpenClaw's rules names is
read-only by its name when the name *starts* with a read verb — `get_order_details`,
`check_room_availability`, `search_products`, `listAllAirports`, `mcp__github__get_issue`,
`identificar_paciente`, `consultar_saldo` — and no word of it is a verb that changes something
(`get_or_create_user`, `check_in_passenger`, `fetch_and_store`, `verificar_y_pagar` stay
mutating). Verbs of other languages count where the name itself is in that language: a Spanish
verb only with no English word-verb before it, and so on; each table says which language it is,
and the reason names it.

The name is split into words at `_`, `-`, `.`, `:`, `/`, spaces and lower→upper case changes;
a namespace prefix (`mcp__server__`, `functions.`) is dropped first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from replaylab import caches

#: verbs whose call only looks something up, by language
READ_VERBS: dict[str, frozenset[str]] = {
    "English": frozenset(
        {"get", "list", "search", "find", "check", "read", "fetch", "lookup", "look", "show", "view", "describe"}
        | {"count", "verify", "validate", "query", "retrieve", "inspect", "browse", "peek", "preview", "explain"}
        | {"estimate", "calculate", "compute", "compare", "is", "has", "can", "exists"}
    ),
    "Spanish": frozenset(
        {"obtener", "buscar", "listar", "consultar", "verificar", "identificar", "comprobar", "revisar", "ver"}
        | {"mostrar", "leer", "encontrar", "validar", "calcular", "contar", "recuperar", "conseguir", "averiguar"}
        | {"chequear", "localizar", "describir"}
    ),
    "Portuguese": frozenset(
        {"obter", "buscar", "listar", "consultar", "verificar", "identificar", "mostrar", "ler", "encontrar"}
        | {"procurar", "pesquisar", "validar", "calcular", "contar", "recuperar", "checar", "visualizar"}
    ),
    "French": frozenset(
        {"obtenir", "chercher", "rechercher", "lister", "consulter", "verifier", "vérifier", "identifier"}
        | {"afficher", "lire", "trouver", "valider", "calculer", "compter", "récupérer", "recuperer"}
    ),
    "German": frozenset(
        {"hole", "holen", "suche", "suchen", "liste", "auflisten", "pruefe", "prüfe", "pruefen", "prüfen", "lese"}
        | {"lesen", "zeige", "zeigen", "finde", "finden", "abfragen", "berechne", "berechnen"}
    ),
    "Italian": frozenset(
        {"ottieni", "ottenere", "cerca", "cercare", "elenca", "elencare", "consulta", "verifica", "verificare"}
        | {"mostra", "leggi", "leggere", "trova", "trovare", "calcola", "conta"}
    ),
}
#: verbs that change something wherever they stand in the name (`get_or_create_user`)
CHANGE_VERBS = frozenset(
    {
        "create", "add", "insert", "update", "upsert", "save", "store", "write", "edit", "modify", "delete",
        "remove", "drop", "purge", "cancel", "reserve", "buy", "purchase", "pay", "refund", "send", "notify",
        "publish", "submit", "approve", "reject", "assign", "unassign", "install", "uninstall", "deploy",
        "execute", "exec", "kill", "restart", "reboot", "reset", "toggle", "enable", "disable", "grant",
        "revoke", "archive", "restore", "register", "confirm", "sync", "merge", "commit", "push", "invite",
        "generate", "trigger", "invoke", "launch", "redeem", "subscribe", "unsubscribe", "activate",
        "deactivate", "suspend", "resume", "escalate", "reopen", "increment", "decrement", "rename", "move",
        "upload", "import", "export", "apply", "replace", "overwrite", "destroy", "erase", "wipe", "refuel",
        "reseat", "connect", "disconnect", "provision", "unlink", "unblock", "unlock", "checkin", "checkout",
        "crear", "agregar", "añadir", "anadir", "actualizar", "modificar", "cambiar", "eliminar", "borrar",
        "cancelar", "reservar", "pagar", "enviar", "registrar", "asignar", "programar", "agendar", "confirmar",
        "guardar", "editar", "cobrar", "reembolsar", "transferir", "aprobar", "rechazar", "cerrar", "abrir",
        "criar", "adicionar", "atualizar", "alterar", "excluir", "apagar", "salvar", "créer", "creer",
        "ajouter", "modifier", "supprimer", "annuler", "réserver", "reserver", "payer", "envoyer",
        "enregistrer", "erstellen", "hinzufuegen", "hinzufügen", "aendern", "ändern", "loeschen", "löschen",
        "stornieren", "buchen", "bezahlen", "senden", "speichern", "creare", "aggiungere", "aggiornare",
        "modificare", "eliminare", "cancellare", "annullare", "prenotare", "pagare", "inviare",
    }
)  # fmt: skip
#: words that are verbs that change something only where a verb stands (first, or after `and` /
#: `or`), nouns elsewhere: `book_reservation` changes, `get_booking` / `get_order_details` read
CHANGE_VERBS_IN_VERB_POSITION = frozenset(
    {
        "set", "put", "post", "patch", "order", "book", "return", "exchange", "transfer", "charge", "email",
        "comment", "reply", "share", "like", "follow", "unfollow", "link", "tag", "untag", "issue", "mark",
        "process", "call", "block", "lock", "schedule", "copy", "change", "sign", "close", "open", "run",
        "start", "stop", "do", "make", "clear", "login", "logout", "forward", "perform", "complete", "claim",
        "resolve", "attach", "detach", "ban", "mute", "record", "log", "pin", "unpin", "star", "vote", "rate",
        "review", "approve", "fill", "use", "spend", "withdraw", "deposit", "accept", "decline", "join", "leave",
    }
)  # fmt: skip
_CONNECTORS = frozenset({"and", "or", "then", "y", "o", "e", "ou", "et", "und", "oder"})
#: a read verb followed by one of these words is a change (`check_in`, `look_up`? no: `check_out`)
_PARTICLE_CHANGES = {"check": frozenset({"in", "out"}), "sign": frozenset({"in", "out", "up"})}
_NAMESPACE = re.compile(r"^(?:mcp__[^_]+(?:_[^_]+)*?__|functions\.|tools?[./:])", re.IGNORECASE)
_SPLIT = re.compile(r"[_\-.:/\s]+|(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@dataclass(frozen=True)
class VerbVerdict:
    """Whether a tool's name says it only reads, and why."""

    read_only: bool
    reason: str


def name_words(name: str) -> list[str]:
    """The lower-cased words of a tool name, namespace dropped (`mcp__gh__getIssue` → get, issue)."""
    bare = _NAMESPACE.sub("", name.strip())
    return [w.lower() for w in _SPLIT.split(bare) if w]


@caches.lru("safety.verb_verdict", maxsize=4096)
def verb_verdict(name: str) -> VerbVerdict:
    """Read-only when the name starts with a read verb and holds no change verb (module rules)."""
    words = name_words(name)
    if not words:
        return VerbVerdict(False, "a tool name without words")
    first = words[0]
    in_verb_position = {first} | {w for before, w in zip(words, words[1:]) if before in _CONNECTORS}
    change = next(
        (w for w in words if w in CHANGE_VERBS or (w in in_verb_position and w in CHANGE_VERBS_IN_VERB_POSITION)),
        None,
    )
    if change is not None:
        return VerbVerdict(False, f"its name holds `{change}`, a verb that changes something")
    particles = _PARTICLE_CHANGES.get(first)
    if particles and len(words) > 1 and words[1] in particles:
        return VerbVerdict(False, f"its name starts with `{first}_{words[1]}`, which changes something")
    for language, verbs in READ_VERBS.items():
        if first in verbs:
            shown = f"`{first}`" if language == "English" else f"the {language} verb `{first}`"
            return VerbVerdict(True, f"its name starts with {shown}, a verb that only reads")
    return VerbVerdict(False, f"its name starts with `{first}`, no read verb")
