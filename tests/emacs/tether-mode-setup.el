;;; tether-mode-setup.el --- a plain Emacs running tether-mode, for the end-to-end tests  -*- lexical-binding: t -*-

;; Loaded with `emacs -nw -Q -l tether-mode-setup.el' inside tmux, in place of setup.el: no
;; eglot, no lsp-mode, only editors/emacs/tether.el on Emacs's own jsonrpc.el and project.el.
;; It offers the functions conftest.py's `Emacs' calls (`tether-test-open', `tether-test-state',
;; `tether-test--call'), so that the same driver works. Environment:
;;   TETHER_BIN       the tether binary
;;   TETHER_TEST_OUT  a folder for the files this writes (results, state)
;;   TETHER_EL_DIR    the folder holding tether.el

(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)
(require 'json)
(require 'server)

(defvar tether-test-out (file-name-as-directory (getenv "TETHER_TEST_OUT")))

(setq tether-executable (getenv "TETHER_BIN")
      make-backup-files nil
      auto-save-default nil
      create-lockfiles nil
      inhibit-startup-screen t)
;; Keystrokes come from tmux as UTF-8.
(set-terminal-coding-system 'utf-8)
(set-keyboard-coding-system 'utf-8)

(setq server-socket-dir tether-test-out
      server-name "emacs")
(server-start)

;;   TETHER_TEST_INIT_OPTIONS  JSON: `tether-initialization-options'
(let ((options (getenv "TETHER_TEST_INIT_OPTIONS")))
  (when (and options (not (string-empty-p options)))
    (setq tether-initialization-options (json-parse-string options :object-type 'plist))))

;;   TETHER_TEST_REVIEW     "ask": every change waits for review (`tether-review')
;;   TETHER_TEST_REVIEW_TIMEOUT  how long it waits, in ms (the server's default otherwise)
;;   TETHER_TEST_REVIEW_EDIFF    "1": the review opens its files in ediff (`tether-review-ediff')
(setq tether-review-ediff (equal (getenv "TETHER_TEST_REVIEW_EDIFF") "1"))
(when (equal (getenv "TETHER_TEST_REVIEW") "ask")
  (setq tether-review
        (let ((timeout (getenv "TETHER_TEST_REVIEW_TIMEOUT")))
          (if timeout (list :mode 'ask :timeout (string-to-number timeout)) 'ask))))

(tether-mode 1)

;;; A language server beside tether, through eglot, when the test names one:
;;   TETHER_TEST_PYTHON_LS  the command of a Python language server, as a JSON list

(defvar tether-test-python-ls
  (let ((command (getenv "TETHER_TEST_PYTHON_LS")))
    (and command (not (string-empty-p command))
         (json-parse-string command :array-type 'list))))

(when tether-test-python-ls
  (dolist (dir (directory-files "/usr/share/emacs/site-lisp/elpa" t "^[a-z]"))
    (add-to-list 'load-path dir))
  (require 'eglot)
  (setq eglot-autoreconnect nil
        eglot-confirm-server-initiated-edits nil)
  (add-to-list 'eglot-server-programs (cons 'python-mode tether-test-python-ls)))

;;   TETHER_TEST_LSP_MODE   "1": lsp-mode runs that server instead of eglot
(when (and tether-test-python-ls (equal (getenv "TETHER_TEST_LSP_MODE") "1"))
  (require 'lsp-mode)
  (setq lsp-session-file (concat tether-test-out "lsp-session")
        lsp-auto-guess-root t
        lsp-enable-file-watchers nil
        lsp-headerline-breadcrumb-enable nil
        lsp-modeline-code-actions-enable nil
        lsp-modeline-diagnostics-enable nil
        lsp-enable-snippet nil)
  (lsp-register-client
   (make-lsp-client :new-connection (lsp-stdio-connection tether-test-python-ls)
                    :major-modes '(python-mode)
                    :server-id 'tether-test-python)))

;;; What the tests count: every `workspace/applyEdit' answered, and the refusals among them.

(defvar tether-test-applied 0 "How many workspace edits tether.el was asked to apply.")
(defvar tether-test-refusals nil "The reasons of the edits tether.el refused, oldest first.")

(advice-add 'tether--apply-workspace-edit :filter-return
            (lambda (answer)
              (setq tether-test-applied (1+ tether-test-applied))
              (unless (eq (plist-get answer :applied) t)
                (setq tether-test-refusals
                      (append tether-test-refusals (list (plist-get answer :failureReason)))))
              answer))

;;; Setup, called through emacsclient.

(defvar tether-test-buffer nil "The buffer the test types into.")

(defun tether-test--wait-for (what ready &optional seconds)
  (let ((deadline (+ (float-time) (or seconds 20))))
    (while (and (not (funcall ready)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (or (funcall ready) (error "timed out waiting for %s" what))))

(defun tether-test-open (file)
  "Visits FILE in the selected window; waits until tether-mode has it open on tether lsp."
  (setq tether-test-buffer (find-file file))
  (tether-test--wait-for
   "tether-mode to open the buffer"
   (lambda () (let ((conn (buffer-local-value 'tether--conn tether-test-buffer)))
                (and conn (eq (tether--state conn) 'ready)))))
  t)

(defun tether-test-goto (line column)
  "Puts point at 1-based LINE and 0-based COLUMN (in characters), where typing goes."
  (with-current-buffer tether-test-buffer
    (goto-char (point-min))
    (forward-line (1- line))
    (forward-char column)
    (set-window-point (get-buffer-window tether-test-buffer) (point)))
  t)

(defun tether-test-busy (line column seconds)
  "Puts point at LINE and COLUMN, then keeps Emacs busy for SECONDS without reading input
or process output: keys typed and an edit sent meanwhile are both waiting when it ends."
  (tether-test-goto line column)
  (let ((end (+ (float-time) seconds)))
    (while (< (float-time) end)))
  t)

(defun tether-test-line-is (line text)
  "Whether 1-based LINE of the test's buffer is TEXT."
  (with-current-buffer tether-test-buffer
    (save-excursion
      (goto-char (point-min))
      (forward-line (1- line))
      (equal (buffer-substring-no-properties (line-beginning-position) (line-end-position))
             text))))

(defun tether-test-pid ()
  "The pid of the tether lsp the test's buffer is open on."
  (process-id (jsonrpc--process (buffer-local-value 'tether--conn tether-test-buffer))))

(defun tether-test-connected ()
  "Whether the test's buffer is open on a ready tether lsp."
  (let ((conn (buffer-local-value 'tether--conn tether-test-buffer)))
    (and conn (eq (tether--state conn) 'ready) t)))

(defun tether-test-status ()
  "Runs `tether-status' and writes what its buffer shows to status.txt."
  (tether-status)
  (with-current-buffer "*tether status*"
    (write-region (point-min) (point-max) (concat tether-test-out "status.txt")))
  t)

(defun tether-test-restart ()
  "`tether-restart' from the test's buffer, as a user would run it there."
  (with-current-buffer tether-test-buffer (tether-restart))
  t)

;;; The editor's knowledge: eglot beside tether-mode.

(defun tether-test-eglot (file)
  "Visits FILE and has eglot manage it with the test's language server (as `M-x eglot' would:
`eglot-ensure' waits for a command loop that emacsclient does not run); waits until the server
has reported on it and tether-mode has kept that report."
  (tether-test-open file)
  (with-current-buffer tether-test-buffer
    (unless eglot--managed-mode
      (apply #'eglot--connect (eglot--guess-contact))))
  (tether-test--wait-for
   "eglot's server to report on the buffer"
   (lambda () (with-current-buffer tether-test-buffer
                (and eglot--managed-mode tether--reports t)))
   90)
  t)

(defun tether-test-lsp (file)
  "Visits FILE and starts lsp-mode in it with the test's language server; waits until the
server has reported on it and tether-mode has kept that report."
  (tether-test-open file)
  (with-current-buffer tether-test-buffer
    (unless lsp-mode
      (lsp)))
  (tether-test--wait-for
   "lsp-mode's server to report on the buffer"
   (lambda () (with-current-buffer tether-test-buffer
                (and lsp-mode tether--reports t)))
   90)
  t)

(defun tether-test-visit (file)
  "Visits FILE in the selected window (eglot takes it: it serves the project already);
waits until tether-mode has it open."
  (tether-test-open file)
  (tether-test--wait-for "eglot to manage the buffer"
                         (lambda () (buffer-local-value 'eglot--managed-mode tether-test-buffer)))
  t)

(defun tether-test-select (line column end-line end-column)
  "Selects from 1-based LINE and 0-based COLUMN to END-LINE and END-COLUMN (characters) in the
selected window, as a user dragging the region would: mark at the start, point at the end."
  (with-current-buffer tether-test-buffer
    (goto-char (point-min))
    (forward-line (1- line))
    (forward-char column)
    (push-mark (point) t t)
    (goto-char (point-min))
    (forward-line (1- end-line))
    (forward-char end-column)
    (set-window-point (get-buffer-window tether-test-buffer) (point))
    (region-active-p)))

(defun tether-test-undo (file)
  "One `undo' in the buffer visiting FILE, as \\[undo] there would."
  (with-current-buffer (find-buffer-visiting file)
    (let ((last-command nil))
      (undo)))
  t)

(defun tether-test-sent-diagnostics (file)
  "Writes sent.json: the params of the diagnostics of FILE's buffer last sent to tether."
  (with-current-buffer (find-buffer-visiting file)
    (tether-test--write "sent.json" (or (cdr tether--diagnostics-sent) :null)))
  t)

;;; Review and history.

(defun tether-test-history ()
  "Runs `tether-history' from the test's buffer, as a user would there."
  (with-current-buffer tether-test-buffer (tether-history))
  t)

(defun tether-test-shown ()
  "Writes shown.json: the buffer of the selected window, its major mode and text, and whether
the minibuffer is asking something."
  (let ((buffer (window-buffer (selected-window))))
    (tether-test--write
     "shown.json"
     (list :buffer (buffer-name buffer)
           :mode (symbol-name (buffer-local-value 'major-mode buffer))
           :text (with-current-buffer buffer
                   (buffer-substring-no-properties (point-min) (point-max)))
           :line (with-current-buffer buffer (line-number-at-pos (window-point)))
           :prompt (if (active-minibuffer-window)
                       (with-current-buffer (window-buffer (active-minibuffer-window))
                         (buffer-substring-no-properties (point-min) (point-max)))
                     :null))))
  t)

;;; The package's commands, run as a user would run them from the test's buffer.

(defun tether-test-grep (pattern)
  "Runs `tether-grep' for PATTERN, then `next-error' on its results; writes grep.json: the
results buffer's text and mode, and the file and line `next-error' went to."
  (when (get-buffer "*tether grep*") (kill-buffer "*tether grep*"))
  (with-current-buffer tether-test-buffer (tether-grep pattern))
  (tether-test--wait-for "the grep results"
                         (lambda () (and (get-buffer "*tether grep*")
                                         (with-current-buffer "*tether grep*"
                                           (derived-mode-p 'grep-mode)))))
  (let ((results (with-current-buffer "*tether grep*" (buffer-string)))
        (mode (with-current-buffer "*tether grep*" (symbol-name major-mode))))
    (next-error)
    (let ((window (selected-window)))
      (with-current-buffer (window-buffer window)
        (tether-test--write "grep.json"
                            (list :results results :mode mode
                                  :file (buffer-file-name)
                                  :line (line-number-at-pos (window-point window)))))))
  t)

(defun tether-test-call (tool arguments)
  "Runs `tether-call' for TOOL with ARGUMENTS (JSON text); writes call.json: what its result
buffer shows."
  (let ((name (format "*tether %s*" tool)))
    (when (get-buffer name) (kill-buffer name))
    (with-current-buffer tether-test-buffer (tether-call tool arguments))
    (tether-test--wait-for "the call's result" (lambda () (get-buffer name)))
    (with-current-buffer name
      (tether-test--write "call.json" (list :text (buffer-string)
                                            :header (format "%s" header-line-format)))))
  t)

(defun tether-test-odd-changes ()
  "Changes the test's buffer with commands whose change hooks are not one simple change each:
regexp replacements (which need the match data the hooks run between), case changes (announced
for a larger region than they report), transposed lines, a rigid indent, a sort."
  (with-current-buffer tether-test-buffer
    (goto-char (point-min))
    ;; A wide character before each match: the UTF-16 column count finds it.
    (insert "😀 ")
    (goto-char (point-min))
    (while (re-search-forward "\\(a\\)\\(l\\)" nil t)
      (replace-match "\\2\\1"))
    (goto-char (point-min))
    (capitalize-word 2)
    (upcase-region (point-min) (+ (point-min) 3))
    (goto-char (point-min))
    (forward-line 1)
    (transpose-lines 1)
    (indent-rigidly (point-min) (point-max) 2)
    (sort-lines nil (point-min) (point-max))
    (goto-char (point-max))
    (insert "é中😀\n"))
  t)

(defun tether-test-use-utf-16 ()
  "Restarts tether lsp offering UTF-16 positions only (tether.el offers UTF-8 first, which the
server takes), so that the UTF-16 columns are exercised too; waits until the buffer is open."
  (advice-add 'tether--initialize-params :filter-return
              (lambda (params)
                (plist-put (plist-get params :capabilities) :general
                           (list :positionEncodings ["utf-16"]))
                params))
  (with-current-buffer tether-test-buffer (tether-restart))
  (tether-test--wait-for
   "tether-mode to open the buffer"
   (lambda () (let ((conn (buffer-local-value 'tether--conn tether-test-buffer)))
                (and conn (eq (tether--state conn) 'ready)))))
  (symbol-name (tether--encoding (buffer-local-value 'tether--conn tether-test-buffer))))

(defun tether-test-kill (file)
  "Kills the buffer visiting FILE, its changes given up (as a user answering yes would)."
  (with-current-buffer (find-buffer-visiting file)
    (set-buffer-modified-p nil)
    (kill-buffer))
  t)

;;; Tool calls.

(defun tether-test--write (name object)
  "Writes OBJECT as JSON to NAME in the output folder, whole or not at all (the tests poll)."
  (let ((file (concat tether-test-out name)))
    (with-temp-file (concat file ".part")
      (insert (json-encode object)))
    (rename-file (concat file ".part") file t)))

(defun tether-test--call (id tool arguments)
  "Runs TOOL with ARGUMENTS (a JSON object as text) through `tether.callTool' on the test
buffer's server and writes the answer, or the JSON-RPC error, to result-ID.json."
  (let* ((conn (buffer-local-value 'tether--conn tether-test-buffer))
         (params (list :command "tether.callTool"
                       :arguments (vector (list :tool tool
                                                :arguments (json-parse-string
                                                            arguments :object-type 'hash-table)))))
         (answer
          (condition-case err
              (list :result (jsonrpc-request conn :workspace/executeCommand params))
            (jsonrpc-error
             (list :error (or (cdr (assq 'jsonrpc-error-message (cdr err))) (format "%S" err))))
            (error (list :error (error-message-string err))))))
    (tether-test--write (format "result-%s.json" id) answer)))

;;; State, read through emacsclient.

(defun tether-test-state (file)
  "Writes state.json: FILE's buffer text and modified flag, the edits and refusals counted."
  (with-current-buffer (find-buffer-visiting file)
    (tether-test--write
     "state.json"
     (list :text (buffer-substring-no-properties (point-min) (point-max))
           :modified (if (buffer-modified-p) t :json-false)
           :version tether--version
           :connected (if tether--conn t :json-false)
           :applied tether-test-applied
           :refusals (vconcat tether-test-refusals)
           :messages (with-current-buffer (messages-buffer)
                       (buffer-substring-no-properties (point-min) (point-max))))))
  t)

;;; tether-mode-setup.el ends here
