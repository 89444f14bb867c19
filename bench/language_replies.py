"""A small labelled set of chat-bot replies for ``reply.language`` (issue 23): short replies
(one to six words, what a bot says between tasks) and long ones (a sentence or more), in the
six languages the check accepts, plus replies in neighbouring languages (Dutch, Catalan,
Galician, Romanian, Danish) that must not be taken for one of the six.

Written for this benchmark; the short ones are the kind the function-word detector could
not tell (few or no function words). ``bench/bench_language.py`` runs the detectors on it.
"""

from __future__ import annotations

SHORT: dict[str, list[str]] = {
    "en": ["Thanks!", "Done.", "Sure, here you go.", "Which document?", "Got it, one moment.", "Sorry, try again later.",
           "Please send the link.", "Summary ready.", "Good morning!", "No problem.", "What platform?",
           "I can't open that file.", "Here is your summary.", "Anything else?", "Welcome back!", "Link received.",
           "Working on it.", "That link is broken.", "Great question!", "See you tomorrow."],
    "es": ["¡Gracias!", "Hecho.", "Claro, aquí tienes.", "¿Qué documento?", "Entendido, un momento.",
           "Lo siento, inténtalo más tarde.", "Envíame el enlace.", "Resumen listo.", "¡Buenos días!", "No hay problema.",
           "¿Qué plataforma?", "No puedo abrir ese archivo.", "Aquí está tu resumen.", "¿Algo más?",
           "¡Bienvenido de nuevo!", "Enlace recibido.", "Trabajando en ello.", "Ese enlace está roto.",
           "¡Buena pregunta!", "Hasta mañana."],
    "fr": ["Merci !", "Fait.", "Bien sûr, voici.", "Quel document ?", "Compris, un instant.",
           "Désolé, réessayez plus tard.", "Envoyez-moi le lien.", "Résumé prêt.", "Bonjour !", "Pas de souci.",
           "Quelle plateforme ?", "Impossible d'ouvrir ce fichier.", "Voici votre résumé.", "Autre chose ?",
           "Bon retour !", "Lien reçu.", "J'y travaille.", "Ce lien est cassé.", "Bonne question !", "À demain."],
    "de": ["Danke!", "Erledigt.", "Klar, bitte schön.", "Welches Dokument?", "Verstanden, einen Moment.",
           "Entschuldigung, versuch es später.", "Schick mir den Link.", "Zusammenfassung fertig.", "Guten Morgen!",
           "Kein Problem.", "Welche Plattform?", "Ich kann die Datei nicht öffnen.", "Hier ist deine Zusammenfassung.",
           "Sonst noch etwas?", "Willkommen zurück!", "Link erhalten.", "Ich arbeite daran.", "Der Link ist kaputt.",
           "Gute Frage!", "Bis morgen."],
    "pt": ["Obrigado!", "Feito.", "Claro, aqui está.", "Qual documento?", "Entendi, um momento.",
           "Desculpe, tente mais tarde.", "Envie-me o link.", "Resumo pronto.", "Bom dia!", "Sem problema.",
           "Qual plataforma?", "Não consigo abrir esse arquivo.", "Aqui está o seu resumo.", "Mais alguma coisa?",
           "Bem-vindo de volta!", "Link recebido.", "Estou trabalhando nisso.", "Esse link está quebrado.",
           "Boa pergunta!", "Até amanhã."],
    "it": ["Grazie!", "Fatto.", "Certo, ecco qui.", "Quale documento?", "Capito, un attimo.",
           "Scusa, riprova più tardi.", "Mandami il link.", "Riassunto pronto.", "Buongiorno!", "Nessun problema.",
           "Quale piattaforma?", "Non riesco ad aprire quel file.", "Ecco il tuo riassunto.", "Altro?",
           "Bentornato!", "Link ricevuto.", "Ci sto lavorando.", "Quel link non funziona.", "Bella domanda!",
           "A domani."],
}

LONG: dict[str, list[str]] = {
    "en": ["Sorry, I can only work in English. Please send your request again in English.",
           "Here is a summary of the paper for LinkedIn: the trial enrolled 412 adults and monthly migraine days fell by 30%.",
           "I could not download that document because the server answered with an error; please check the link and try again.",
           "The report covers three years of cycling data and finds that commuting trips grew faster than leisure trips."],
    "es": ["Lo siento, solo puedo trabajar en inglés. Por favor, envía tu solicitud de nuevo en inglés.",
           "Aquí tienes un resumen del artículo para LinkedIn: el ensayo incluyó a 412 adultos y los días de migraña bajaron un 30%.",
           "No pude descargar ese documento porque el servidor respondió con un error; revisa el enlace e inténtalo otra vez.",
           "El informe cubre tres años de datos de ciclismo y concluye que los viajes al trabajo crecieron más que los de ocio."],
    "fr": ["Désolé, je ne peux travailler qu'en anglais. Merci de renvoyer votre demande en anglais.",
           "Voici un résumé de l'article pour LinkedIn : l'essai a inclus 412 adultes et les jours de migraine ont baissé de 30 %.",
           "Je n'ai pas pu télécharger ce document car le serveur a répondu par une erreur ; vérifiez le lien et réessayez.",
           "Le rapport couvre trois ans de données sur le vélo et montre que les trajets domicile-travail ont augmenté plus vite."],
    "de": ["Entschuldigung, ich kann nur auf Englisch arbeiten. Bitte sende deine Anfrage noch einmal auf Englisch.",
           "Hier ist eine Zusammenfassung des Artikels für LinkedIn: Die Studie umfasste 412 Erwachsene, die Migränetage sanken um 30 %.",
           "Ich konnte das Dokument nicht herunterladen, weil der Server mit einem Fehler antwortete; prüfe bitte den Link.",
           "Der Bericht umfasst drei Jahre Fahrraddaten und zeigt, dass Pendelfahrten schneller zunahmen als Freizeitfahrten."],
    "pt": ["Desculpe, só consigo trabalhar em inglês. Por favor, envie o seu pedido novamente em inglês.",
           "Aqui está um resumo do artigo para o LinkedIn: o ensaio incluiu 412 adultos e os dias de enxaqueca caíram 30%.",
           "Não consegui baixar esse documento porque o servidor respondeu com um erro; verifique o link e tente de novo.",
           "O relatório cobre três anos de dados de ciclismo e conclui que as viagens para o trabalho cresceram mais depressa."],
    "it": ["Mi dispiace, posso lavorare solo in inglese. Per favore, invia di nuovo la tua richiesta in inglese.",
           "Ecco un riassunto dell'articolo per LinkedIn: lo studio ha incluso 412 adulti e i giorni di emicrania sono calati del 30%.",
           "Non sono riuscito a scaricare il documento perché il server ha risposto con un errore; controlla il link e riprova.",
           "Il rapporto copre tre anni di dati sul ciclismo e conclude che gli spostamenti casa-lavoro sono cresciuti più in fretta."],
}

#: Replies in none of the six: a detector must not name one of the six for them.
OTHER: list[tuple[str, str]] = [
    ("nl", "Bedankt!"), ("nl", "Welk document bedoel je?"), ("nl", "Hier is je samenvatting."),
    ("nl", "Sorry, ik kan alleen in het Engels werken. Stuur je verzoek opnieuw in het Engels."),
    ("ca", "Gràcies!"), ("ca", "Quin document vols?"), ("ca", "Aquí tens el teu resum."),
    ("ca", "Ho sento, només puc treballar en anglès. Torna a enviar la teva petició en anglès."),
    ("gl", "Grazas!"), ("gl", "Aquí tes o teu resumo."),
    ("ro", "Mulțumesc!"), ("ro", "Iată rezumatul tău."),
    ("ro", "Îmi pare rău, pot lucra doar în engleză. Te rog să trimiți din nou cererea în engleză."),
    ("da", "Tak!"), ("da", "Her er dit resumé."),
]
