// The words of passkeys on the hosted pages (contract section 29), in the ten languages of the
// sign-in's other words (strings.ts merges them into SIGN_IN_STRINGS; test/unit/sign-in-strings.test.ts
// checks every language has every message). `{site}` is filled in when shown.

const EN = {
  passkey_heading: "With a passkey",
  passkey_label: "Passkey",
  passkey_hint: "Choose your passkey from the suggestions of this field, or use the button.",
  passkey_button: "Sign in with a passkey",
  passkey_unsupported: "This browser cannot use passkeys. Please use another way to sign in.",
  passkey_cancelled: "No passkey was used. Please try again, or use another way to sign in.",
  passkey_refused: "This passkey does not sign in to this site. Sign in another way, then add a passkey.",
  passkey_add_title: "Add a passkey",
  passkey_add_text: "Next time, sign in to {site} with your fingerprint, face or screen lock instead of waiting for an email.",
  passkey_add_button: "Add a passkey",
  passkey_not_now: "Not now",
  passkey_close: "Close",
  passkey_added: "Passkey added. Next time, choose it when you sign in.",
  passkey_waiting: "Waiting for the page that opened this window…",
};

export type PasskeyStrings = typeof EN;

const DE: PasskeyStrings = {
  passkey_heading: "Mit einem Passkey",
  passkey_label: "Passkey",
  passkey_hint: "Wählen Sie Ihren Passkey aus den Vorschlägen dieses Felds oder nutzen Sie die Schaltfläche.",
  passkey_button: "Mit einem Passkey anmelden",
  passkey_unsupported: "Dieser Browser kann keine Passkeys verwenden. Bitte melden Sie sich anders an.",
  passkey_cancelled: "Es wurde kein Passkey verwendet. Versuchen Sie es erneut oder melden Sie sich anders an.",
  passkey_refused:
    "Dieser Passkey meldet Sie nicht bei dieser Website an. Melden Sie sich anders an und fügen Sie dann einen Passkey hinzu.",
  passkey_add_title: "Passkey hinzufügen",
  passkey_add_text:
    "Melden Sie sich beim nächsten Mal bei {site} mit Fingerabdruck, Gesicht oder Displaysperre an, statt auf eine E-Mail zu warten.",
  passkey_add_button: "Passkey hinzufügen",
  passkey_not_now: "Nicht jetzt",
  passkey_close: "Schließen",
  passkey_added: "Passkey hinzugefügt. Wählen Sie ihn beim nächsten Anmelden aus.",
  passkey_waiting: "Warten auf die Seite, die dieses Fenster geöffnet hat …",
};

const FR: PasskeyStrings = {
  passkey_heading: "Avec une clé d’accès",
  passkey_label: "Clé d’accès",
  passkey_hint: "Choisissez votre clé d’accès parmi les suggestions de ce champ, ou utilisez le bouton.",
  passkey_button: "Se connecter avec une clé d’accès",
  passkey_unsupported: "Ce navigateur ne peut pas utiliser de clés d’accès. Connectez-vous autrement.",
  passkey_cancelled: "Aucune clé d’accès n’a été utilisée. Réessayez ou connectez-vous autrement.",
  passkey_refused: "Cette clé d’accès ne permet pas de se connecter à ce site. Connectez-vous autrement, puis ajoutez une clé d’accès.",
  passkey_add_title: "Ajouter une clé d’accès",
  passkey_add_text:
    "La prochaine fois, connectez-vous à {site} avec votre empreinte, votre visage ou le verrouillage de l’écran, sans attendre d’e-mail.",
  passkey_add_button: "Ajouter une clé d’accès",
  passkey_not_now: "Pas maintenant",
  passkey_close: "Fermer",
  passkey_added: "Clé d’accès ajoutée. La prochaine fois, choisissez-la pour vous connecter.",
  passkey_waiting: "En attente de la page qui a ouvert cette fenêtre…",
};

const ES: PasskeyStrings = {
  passkey_heading: "Con una llave de acceso",
  passkey_label: "Llave de acceso",
  passkey_hint: "Elige tu llave de acceso entre las sugerencias de este campo o usa el botón.",
  passkey_button: "Iniciar sesión con una llave de acceso",
  passkey_unsupported: "Este navegador no puede usar llaves de acceso. Inicia sesión de otra forma.",
  passkey_cancelled: "No se usó ninguna llave de acceso. Inténtalo de nuevo o inicia sesión de otra forma.",
  passkey_refused: "Esta llave de acceso no inicia sesión en este sitio. Inicia sesión de otra forma y luego añade una llave de acceso.",
  passkey_add_title: "Añadir una llave de acceso",
  passkey_add_text: "La próxima vez, inicia sesión en {site} con tu huella, tu cara o el bloqueo de pantalla, sin esperar un correo.",
  passkey_add_button: "Añadir una llave de acceso",
  passkey_not_now: "Ahora no",
  passkey_close: "Cerrar",
  passkey_added: "Llave de acceso añadida. La próxima vez, elígela al iniciar sesión.",
  passkey_waiting: "Esperando a la página que abrió esta ventana…",
};

const PT: PasskeyStrings = {
  passkey_heading: "Com uma chave de acesso",
  passkey_label: "Chave de acesso",
  passkey_hint: "Escolha a sua chave de acesso nas sugestões deste campo ou use o botão.",
  passkey_button: "Entrar com uma chave de acesso",
  passkey_unsupported: "Este navegador não pode usar chaves de acesso. Entre de outra forma.",
  passkey_cancelled: "Nenhuma chave de acesso foi usada. Tente novamente ou entre de outra forma.",
  passkey_refused: "Esta chave de acesso não entra neste site. Entre de outra forma e depois adicione uma chave de acesso.",
  passkey_add_title: "Adicionar uma chave de acesso",
  passkey_add_text: "Da próxima vez, entre em {site} com a impressão digital, o rosto ou o bloqueio do ecrã, sem esperar por um email.",
  passkey_add_button: "Adicionar uma chave de acesso",
  passkey_not_now: "Agora não",
  passkey_close: "Fechar",
  passkey_added: "Chave de acesso adicionada. Da próxima vez, escolha-a ao entrar.",
  passkey_waiting: "À espera da página que abriu esta janela…",
};

const IT: PasskeyStrings = {
  passkey_heading: "Con una passkey",
  passkey_label: "Passkey",
  passkey_hint: "Scegli la tua passkey tra i suggerimenti di questo campo oppure usa il pulsante.",
  passkey_button: "Accedi con una passkey",
  passkey_unsupported: "Questo browser non può usare le passkey. Accedi in un altro modo.",
  passkey_cancelled: "Non è stata usata nessuna passkey. Riprova o accedi in un altro modo.",
  passkey_refused: "Questa passkey non consente l’accesso a questo sito. Accedi in un altro modo, poi aggiungi una passkey.",
  passkey_add_title: "Aggiungi una passkey",
  passkey_add_text: "La prossima volta accedi a {site} con impronta, volto o blocco schermo, senza aspettare un’email.",
  passkey_add_button: "Aggiungi una passkey",
  passkey_not_now: "Non ora",
  passkey_close: "Chiudi",
  passkey_added: "Passkey aggiunta. La prossima volta sceglila quando accedi.",
  passkey_waiting: "In attesa della pagina che ha aperto questa finestra…",
};

const NL: PasskeyStrings = {
  passkey_heading: "Met een toegangssleutel",
  passkey_label: "Toegangssleutel",
  passkey_hint: "Kies uw toegangssleutel uit de suggesties van dit veld, of gebruik de knop.",
  passkey_button: "Inloggen met een toegangssleutel",
  passkey_unsupported: "Deze browser kan geen toegangssleutels gebruiken. Log op een andere manier in.",
  passkey_cancelled: "Er is geen toegangssleutel gebruikt. Probeer het opnieuw of log op een andere manier in.",
  passkey_refused:
    "Met deze toegangssleutel logt u niet in op deze site. Log op een andere manier in en voeg daarna een toegangssleutel toe.",
  passkey_add_title: "Toegangssleutel toevoegen",
  passkey_add_text:
    "Log de volgende keer bij {site} in met uw vingerafdruk, gezicht of schermvergrendeling, zonder op een e-mail te wachten.",
  passkey_add_button: "Toegangssleutel toevoegen",
  passkey_not_now: "Niet nu",
  passkey_close: "Sluiten",
  passkey_added: "Toegangssleutel toegevoegd. Kies hem de volgende keer bij het inloggen.",
  passkey_waiting: "Wachten op de pagina die dit venster opende…",
};

const PL: PasskeyStrings = {
  passkey_heading: "Kluczem dostępu",
  passkey_label: "Klucz dostępu",
  passkey_hint: "Wybierz swój klucz dostępu z podpowiedzi tego pola albo użyj przycisku.",
  passkey_button: "Zaloguj się kluczem dostępu",
  passkey_unsupported: "Ta przeglądarka nie obsługuje kluczy dostępu. Zaloguj się w inny sposób.",
  passkey_cancelled: "Nie użyto klucza dostępu. Spróbuj ponownie lub zaloguj się w inny sposób.",
  passkey_refused: "Ten klucz dostępu nie loguje do tej witryny. Zaloguj się w inny sposób, a potem dodaj klucz dostępu.",
  passkey_add_title: "Dodaj klucz dostępu",
  passkey_add_text: "Następnym razem zaloguj się do {site} odciskiem palca, twarzą lub blokadą ekranu, bez czekania na e-mail.",
  passkey_add_button: "Dodaj klucz dostępu",
  passkey_not_now: "Nie teraz",
  passkey_close: "Zamknij",
  passkey_added: "Dodano klucz dostępu. Następnym razem wybierz go przy logowaniu.",
  passkey_waiting: "Czekam na stronę, która otworzyła to okno…",
};

const JA: PasskeyStrings = {
  passkey_heading: "パスキーで",
  passkey_label: "パスキー",
  passkey_hint: "この欄の候補からパスキーを選ぶか、ボタンを使ってください。",
  passkey_button: "パスキーでログイン",
  passkey_unsupported: "このブラウザではパスキーを使えません。別の方法でログインしてください。",
  passkey_cancelled: "パスキーは使われませんでした。もう一度試すか、別の方法でログインしてください。",
  passkey_refused: "このパスキーではこのサイトにログインできません。別の方法でログインしてから、パスキーを追加してください。",
  passkey_add_title: "パスキーを追加",
  passkey_add_text: "次回からは、メールを待たずに指紋・顔・画面ロックで {site} にログインできます。",
  passkey_add_button: "パスキーを追加",
  passkey_not_now: "今はしない",
  passkey_close: "閉じる",
  passkey_added: "パスキーを追加しました。次回のログインで選んでください。",
  passkey_waiting: "このウィンドウを開いたページを待っています…",
};

const ZH: PasskeyStrings = {
  passkey_heading: "使用通行密钥",
  passkey_label: "通行密钥",
  passkey_hint: "从此输入框的建议中选择你的通行密钥，或使用按钮。",
  passkey_button: "使用通行密钥登录",
  passkey_unsupported: "此浏览器无法使用通行密钥。请用其他方式登录。",
  passkey_cancelled: "没有使用通行密钥。请重试，或用其他方式登录。",
  passkey_refused: "此通行密钥无法登录本网站。请先用其他方式登录，再添加通行密钥。",
  passkey_add_title: "添加通行密钥",
  passkey_add_text: "下次登录 {site} 时，用指纹、面容或屏幕锁即可，无需等待邮件。",
  passkey_add_button: "添加通行密钥",
  passkey_not_now: "暂不",
  passkey_close: "关闭",
  passkey_added: "已添加通行密钥。下次登录时选择它即可。",
  passkey_waiting: "正在等待打开此窗口的页面…",
};

export const PASSKEY_STRINGS = { en: EN, de: DE, fr: FR, es: ES, pt: PT, it: IT, nl: NL, pl: PL, ja: JA, zh: ZH } as const;
