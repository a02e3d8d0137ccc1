// The dashboard's progressive enhancement; every page works without it.
// - A region marked data-refresh (a batch still processing) is brought up to date from the server
//   every two seconds until the server sends it without the mark. Only its parts marked data-live
//   change, in place, and only when their content changed. A part that holds the focus waits until
//   the focus leaves it; a part with a field the person has changed keeps it. A role="status" part
//   is announced when its text changes.
// - A form's error summary, or else the notice of the last action, takes the focus when the page
//   opens, so a screen reader reads it first. A summary link to a group of fields (a fieldset, which
//   cannot take the focus) moves the focus to the group's first control.
// - A form with a key (the new shipment, the CSV upload) reached again with the browser's Back or
//   Forward is the form of that moment: it keeps the key that page first came with (in the history
//   entry's state), so sent again it makes nothing twice and the server goes to what it made. A page
//   reached any other way keeps the new key the server gave it.
// - Times are shown in the reader's own time zone and language ("Nov 29, 2026, 04:42:10 AM CST"); the page
//   gives them in UTC, which is what it shows without script, and that stays in the element's title.
//   Since a title is out of reach of a keyboard or a finger, a line at the end of the page names the
//   zone and how far it is from UTC ("Times are in your time zone, America/Chicago: CST is UTC−6 today.").

/**
 * Every time of `root` in the browser's zone and the page's language, the UTC text kept as its title;
 * a day (`data-day`, an estimated delivery) as a date alone.
 */
const language = document.documentElement.lang || undefined;
const localTime = new Intl.DateTimeFormat(language, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'short' });
const localDay = new Intl.DateTimeFormat(language, { year: 'numeric', month: 'short', day: 'numeric', timeZone: 'UTC' });
const localize = (root) => {
  for (const element of root.querySelectorAll('time[datetime]')) {
    const at = new Date(element.getAttribute('datetime'));
    if (Number.isNaN(at.getTime()) || element.hasAttribute('title')) continue;
    element.title = element.textContent;
    element.textContent = (element.hasAttribute('data-day') ? localDay : localTime).format(at);
  }
};

/** UTC−6 for a zone six hours behind, UTC+5:30, UTC at none: `shortOffset` names it GMT. */
const utcOffset = (at) => {
  const gmt = new Intl.DateTimeFormat('en-US', { timeZoneName: 'shortOffset' }).formatToParts(at).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  return gmt.replace('GMT', 'UTC').replace('-', '\u2212');
};

/** The line that says which zone the page's times are in, now that they no longer say UTC. */
const nameTheZone = () => {
  if (document.getElementById('time-zone') || !document.querySelector('time[datetime]:not([data-day])[title]')) return;
  const now = new Date();
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const short = localTime.formatToParts(now).find((p) => p.type === 'timeZoneName')?.value;
  const offset = utcOffset(now);
  const line = document.createElement('p');
  line.id = 'time-zone';
  line.className = 'hint';
  // A zone without a name of its own in the page's language is shown as an offset (GMT+5:30): said once.
  const named = short && !/^(GMT|UTC)/.test(short) ? `${short} is ` : 'it is ';
  line.textContent = /^(Etc\/)?(UTC|GMT|Universal|Zulu)$/.test(zone) ? 'Times are in UTC.' : `Times are in your time zone, ${zone}: ${named}${offset} today.`;
  document.getElementById('main')?.append(line);
};

/** The keys of this page's keyed forms: those its history entry first had, else the server's, kept in the entry. */
const keepFormKeys = () => {
  const fields = [...document.querySelectorAll('form input[name="formKey"]')];
  if (fields.length === 0) return;
  const kept = history.state?.formKeys;
  if (!Array.isArray(kept)) {
    history.replaceState({ ...history.state, formKeys: fields.map((field) => field.value) }, '');
    return;
  }
  fields.forEach((field, i) => {
    if (kept[i]) field.value = kept[i];
  });
};

document.addEventListener('DOMContentLoaded', () => {
  localize(document);
  nameTheZone();
  keepFormKeys();
  const first = document.getElementById('error-summary') ?? document.getElementById('notice');
  if (first) first.focus();
  document.getElementById('error-summary')?.addEventListener('click', (event) => {
    const link = event.target.closest('a[href^="#"]');
    const target = link && document.getElementById(link.getAttribute('href').slice(1));
    if (!target || target.matches('input, select, textarea, button')) return;
    const control = target.querySelector('input, select, textarea, button');
    if (!control) return;
    event.preventDefault();
    target.scrollIntoView({ block: 'start' });
    control.focus();
  });
  const region = document.querySelector('[data-refresh]');
  if (!region) return;
  /** The latest server version of each part not yet shown, by id. */
  const waiting = new Map();
  // Each page answer carries a fresh CSRF token: not a change worth redrawing a form for.
  const comparable = (markup) => markup.replace(/name="_csrf" value="[^"]*"/g, '');
  const apply = () => {
    for (const [id, next] of waiting) {
      const here = document.getElementById(id);
      if (!here) {
        waiting.delete(id);
        continue;
      }
      if (here.contains(document.activeElement) || here.hasAttribute('data-edited')) continue;
      if (here instanceof HTMLProgressElement) {
        here.max = next.max;
        here.value = next.value;
        here.textContent = next.textContent;
      } else if (comparable(here.innerHTML) !== comparable(next.innerHTML)) here.innerHTML = next.innerHTML;
      waiting.delete(id);
    }
  };
  region.addEventListener('input', (event) => event.target.closest('[data-live]')?.setAttribute('data-edited', ''));
  region.addEventListener('focusout', () => setTimeout(apply, 0));
  let finished = false;
  const tick = async () => {
    try {
      const response = await fetch(window.location.href, { headers: { accept: 'text/html' }, credentials: 'same-origin' });
      if (response.ok) {
        const fresh = new DOMParser().parseFromString(await response.text(), 'text/html').getElementById(region.id);
        // The session ended (the answer is the sign-in page): say so, and stop asking.
        if (!fresh) {
          const note = document.createElement('p');
          note.setAttribute('role', 'alert');
          note.className = 'notice refused';
          note.textContent = 'This page stopped following the batch: your session ended. Sign in again to see its progress.';
          region.prepend(note);
          finished = true;
        }
        if (fresh) {
          // As this page shows them, so only a real change is drawn again.
          localize(fresh);
          for (const next of fresh.querySelectorAll('[data-live][id]')) waiting.set(next.id, next);
          apply();
          nameTheZone();
          if (!fresh.hasAttribute('data-refresh')) {
            region.removeAttribute('data-refresh');
            finished = true;
          }
        }
      }
    } catch {
      // A failed request changes nothing: the next tick tries again.
    } finally {
      if (!finished) setTimeout(tick, 2000);
    }
  };
  setTimeout(tick, 2000);
});
