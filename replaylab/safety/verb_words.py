"""The words tool names and URLs are read by (`verbs.py`, `shell_http.py`): verbs that only look
something up, by language; verbs that change something, wherever they stand or only where a verb
stands; and the words that make a name a question."""

from __future__ import annotations

#: verbs whose call only looks something up, by language
READ_VERBS: dict[str, frozenset[str]] = {
    "English": frozenset(
        {"get", "list", "search", "find", "check", "read", "fetch", "lookup", "look", "show", "view", "describe"}
        | {"count", "verify", "validate", "query", "retrieve", "inspect", "browse", "peek", "preview", "explain"}
        | {"estimate", "calculate", "compute", "compare", "is", "has", "can", "exists", "screenshot"}
        | {"aggregate", "summarize", "summarise"}
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
        "revoke", "archive", "restore", "register", "confirm", "sync", "push", "invite",
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
        "comment", "reply", "share", "like", "follow", "unfollow", "link", "tag", "untag", "mark", "merge", "commit",
        "process", "call", "block", "lock", "schedule", "copy", "change", "sign", "close", "open", "run",
        "start", "stop", "do", "make", "clear", "login", "logout", "forward", "perform", "complete", "claim",
        "resolve", "attach", "detach", "ban", "mute", "record", "log", "pin", "unpin", "star", "vote", "rate",
        "review", "approve", "fill", "use", "spend", "withdraw", "deposit", "accept", "decline", "join", "leave",
        "fix", "repair", "build", "compile", "clean", "cleanup", "format", "convert", "upgrade", "downgrade",
        "migrate", "rollback", "revert", "scale", "rebase", "release", "renew", "extend", "split", "draft",
        "compose", "respond", "answer", "handle", "manage", "allocate", "fulfill", "ship", "deliver",
        "dispatch", "route", "queue", "retry", "rerun", "replay", "refresh", "reload", "flush", "prune",
        "setup", "configure", "init", "initialize", "bootstrap", "seed", "train", "take", "press", "click",
        "type", "select", "drag", "navigate", "go", "visit", "upvote", "downvote",
    }
)  # fmt: skip
#: words that make a name a question (`is_refund_allowed`, `can_cancel_order`): the verbs after them
#: are what is asked about, not done
QUESTION_WORDS = frozenset({"is", "are", "was", "were", "has", "have", "can", "could", "should", "does", "may"})
